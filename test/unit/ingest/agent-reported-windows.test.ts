/**
 * What the agent says about its own window wins over the catalog (issue 34 §1; agents.md):
 * Qwen Code's `qwen-code.context.usage` (JSON, `window_size_tokens`) on its `llm_request` spans,
 * GitHub Copilot CLI's `github.copilot.session.usage_info` events (`github.copilot.token_limit`,
 * 64,000 for gpt-4o where the catalog says 128,000) on the run's `invoke_agent` span; a workspace
 * override still wins over both. Spans shaped as agents.md measured them (Qwen Code 0.24.4,
 * Copilot CLI 1.0.102).
 */
import { describe, expect, it } from 'vitest';
import { normalizeSpans } from '../../../src/ingest/index.ts';
import { CTX, span } from './helpers.ts';

const qwenCall = (usage: string) =>
  span({
    name: 'qwen-code.llm_request',
    resource: { 'service.name': 'qwen-code', 'service.version': '0.24.4' },
    scope: { name: 'qwen-code', version: '0.24.4' },
    attributes: {
      'session.id': 'q1',
      'gen_ai.conversation.id': 'q1',
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'qwen3-coder-plus',
      'gen_ai.response.model': 'qwen3-coder-plus',
      'gen_ai.usage.input_tokens': 120_000,
      'gen_ai.usage.output_tokens': 50,
      'qwen-code.context.usage': usage,
    },
  });

describe('Qwen Code: window_size_tokens on every llm_request span', () => {
  it('is the window of the call (source agent)', () => {
    const usage = JSON.stringify({ window_size_tokens: 1_000_000, system_prompt_tokens: 9_000 });
    const [call] = normalizeSpans([qwenCall(usage)], CTX).normalized.calls;
    expect([call!.contextWindow, call!.windowSource]).toEqual([1_000_000, 'agent']);
  });
  it('an override wins; no report leaves the catalog (none for qwen3-coder-plus)', () => {
    const usage = JSON.stringify({ window_size_tokens: 1_000_000 });
    const ctx = { ...CTX, windowOverrides: [{ model: 'qwen3-*', window: 500_000 }] };
    const [overridden] = normalizeSpans([qwenCall(usage)], ctx).normalized.calls;
    expect([overridden!.contextWindow, overridden!.windowSource]).toEqual([500_000, 'override']);
    const [unknown] = normalizeSpans([qwenCall('{}')], CTX).normalized.calls;
    expect([unknown!.contextWindow, unknown!.windowSource]).toEqual([null, null]);
  });
});

describe("GitHub Copilot CLI: token_limit on the run's usage_info events", () => {
  const trace = 'c'.repeat(32);
  const root = span({
    traceId: trace,
    spanId: '1'.repeat(16),
    name: 'invoke_agent',
    resource: { 'service.name': 'github-copilot', 'service.version': '1.0.102' },
    scope: { name: 'github.copilot', version: '1' },
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.conversation.id': 'cp1' },
    events: [
      {
        name: 'github.copilot.session.usage_info',
        timeUnixNano: '1500000000000',
        attributes: {
          'github.copilot.token_limit': 64_000,
          'github.copilot.current_tokens': 12_000,
          'github.copilot.messages_length': 4,
        },
      },
    ],
  });
  const chat = span({
    traceId: trace,
    spanId: '2'.repeat(16),
    parentSpanId: '1'.repeat(16),
    name: 'chat gpt-4o',
    kind: 3,
    resource: root.resource,
    scope: root.scope,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.conversation.id': 'cp1',
      'gen_ai.usage.input_tokens': '50000',
      'gen_ai.usage.output_tokens': '20',
      'gen_ai.response.finish_reasons': ['stop'],
    },
  });

  it("the calls of the run get the agent's 64,000, not the catalog's 128,000", () => {
    const calls = normalizeSpans([chat, root], CTX).normalized.calls;
    expect(calls.map((c) => [c.requestModel, c.contextWindow, c.windowSource])).toEqual([
      ['gpt-4o', 64_000, 'agent'],
    ]);
    // without the run's report: the catalog
    const alone = normalizeSpans([chat], CTX).normalized.calls;
    expect(alone.map((c) => [c.contextWindow, c.windowSource])).toEqual([[128_000, 'catalog']]);
  });
});
