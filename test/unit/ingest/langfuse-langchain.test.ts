/**
 * Spans captured from the real packages (test/fixtures/real/langfuse/ and
 * test/fixtures/real/langchain-openinference/, see their PROVENANCE.md), normalized: Langfuse's
 * `langfuse.observation.*` keys, and LangChain's flattened OpenInference messages whose tool
 * results carry no call id.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { normalizeSpans } from '../../../src/ingest/index.ts';
import { isContentKey } from '../../../src/ingest/content.ts';
import { CTX, NO_CONTENT, spansFromOtlpJson } from './helpers.ts';

const REAL = fileURLToPath(new URL('../../fixtures/real/', import.meta.url));
const spans = (f: string) => spansFromOtlpJson(readFileSync(REAL + f, 'utf8'));

describe('Langfuse JS SDK 5.11.1 (@langfuse/openai observeOpenAI)', () => {
  const input = spans('langfuse/otlp-json_langfuse-openai_5.11.1.json');
  const r = normalizeSpans(input, CTX);
  const calls = r.normalized.calls;

  it('generations are calls, tool observations tool results, by langfuse.observation.type', () => {
    expect(r.keep.map((s) => [s.name, s.role])).toEqual([
      ['OpenAI.chat', 'llm_call'],
      ['read_file', 'tool'],
      ['OpenAI.chat', 'llm_call'],
      ['OpenAI.chat', 'llm_call'],
      ['OpenAI.chat', 'llm_call'],
    ]);
    expect(calls.every((c) => c.producer === 'langfuse')).toBe(true);
    expect(r.normalized.toolResults).toMatchObject([
      { toolName: 'read_file', resultSize: 3000, conversationId: 'sess_langfuse_loop' },
    ]);
  });

  it('usage_details: input excludes the cache, input_cached_tokens added back', () => {
    expect(
      calls.map((c) => [c.inputTokensRaw, c.cacheReadTokens, c.contextTokens, c.usageRule]),
    ).toEqual([
      [20000, 0, 20000, 'exclusive_producer'],
      [1000, 22000, 23000, 'exclusive_producer'],
      [500, 24000, 24500, 'exclusive_producer'],
      [2400, 100000, 102400, 'exclusive_producer'],
    ]);
    expect(calls.map((c) => c.outputTokens)).toEqual([30, 30, 30, 4096]);
  });

  it('model from model.name, max tokens from model.parameters, session.id as the conversation', () => {
    expect(calls.map((c) => [c.requestModel, c.contextWindow, c.maxOutputTokens])).toEqual([
      ['gpt-4o', 128000, 512],
      ['gpt-4o', 128000, 512],
      ['gpt-4o', 128000, 512],
      ['gpt-4o', 128000, 4096],
    ]);
    expect(calls.map((c) => [c.conversationId, c.conversationSynthetic])).toEqual([
      ['sess_langfuse_loop', false],
      ['sess_langfuse_loop', false],
      ['sess_langfuse_loop', false],
      ['sess_langfuse_finding', false],
    ]);
  });

  it('content from observation input/output: tool names by call id, output tool calls; no finish reason', () => {
    expect(calls.map((c) => c.parts?.tools)).toEqual([
      {},
      { read_file: 3000 },
      { read_file: 3000, list_dir: 120 },
      {},
    ]);
    expect(calls.map((c) => [c.outputToolCall, c.outputToolName])).toEqual([
      [true, 'read_file'],
      [true, 'list_dir'],
      [true, 'git_log'],
      [false, null],
    ]);
    expect(calls.map((c) => c.finishReasonRaw)).toEqual([null, null, null, null]);
  });

  it('observation input/output are content: removed when the workspace does not capture it', () => {
    expect(isContentKey('langfuse.observation.input')).toBe(true);
    expect(isContentKey('langfuse.observation.output')).toBe(true);
    const stripped = normalizeSpans(input, NO_CONTENT);
    for (const s of stripped.keep) {
      expect(s.attributes['langfuse.observation.input']).toBeUndefined();
      expect(s.attributes['langfuse.observation.output']).toBeUndefined();
      if (s.role === 'llm_call')
        expect(s.attributes['langfuse.observation.usage_details']).toBeDefined();
    }
    expect(stripped.normalized.calls.map((c) => c.parts?.tools)).toEqual(
      calls.map((c) => c.parts?.tools),
    );
  });
});

describe('LangChain.js 1.4 traced by OpenInference 4.1.1', () => {
  const r = normalizeSpans(
    spans('langchain-openinference/otlp-json_langchain-openinference_4.1.1.json'),
    CTX,
  );
  const calls = r.normalized.calls;

  it('tool results without call ids are named by message order, never "unknown"', () => {
    expect(calls.map((c) => c.parts?.tools)).toEqual([
      { read_file: 3000, list_dir: 120 },
      { read_file: 3000, list_dir: 120, git_log: 150 },
      { write_file: 2 },
    ]);
  });

  it('the TOOL span names its tool (tool.name)', () => {
    expect(r.normalized.toolResults.map((t) => t.toolName)).toEqual(['read_file']);
  });

  it('a streamed tool call cut at the output limit: finish reason length, output a tool call', () => {
    expect(
      calls.map((c) => [c.finishReasonRaw, c.finishClass, c.outputToolCall, c.outputToolName]),
    ).toEqual([
      ['tool_calls', 'tool_call', true, 'git_log'],
      ['length', 'output_limit', true, 'write_file'],
      ['stop', 'stop', false, null],
    ]);
    expect(calls.map((c) => [c.contextTokens, c.cacheReadTokens, c.usageRule])).toEqual([
      [24500, 24000, 'inclusive'],
      [29000, 28000, 'inclusive'],
      [6300, 6000, 'inclusive'],
    ]);
  });
});
