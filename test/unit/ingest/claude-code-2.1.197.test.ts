/**
 * Normalization of what the real Claude Code CLI 2.1.197 exported (captured by the real-CLI
 * scenarios, test/fixtures/real/claude-code-2.1.197/PROVENANCE.md): OTLP bodies as the CLI sent
 * them and the transcript it wrote.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalizeLogs, normalizeSpans, normalizeTranscript } from '../../../src/ingest/index.ts';
import { assumedWindow, contextWindowFor } from '../../../src/ingest/windows.ts';
import type { LlmCall } from '../../../src/model/calls.ts';
import { CTX, capturedOtlp } from './helpers.ts';

const DIR = join(import.meta.dirname, '../../fixtures/real/claude-code-2.1.197');

/** Every span and log record of one captured session, decoded as the receiver decodes them. */
const captured = (name: string) => capturedOtlp(join(DIR, name));

const mainCalls = (calls: LlmCall[]) =>
  calls
    .filter((c) => c.sideCall === null)
    .sort((a, b) => (BigInt(a.startNs) < BigInt(b.startNs) ? -1 : 1));

describe('Claude Code 2.1.197, captured from the real CLI', () => {
  it('one compaction counts once: the compaction event, not also its compact side call', () => {
    const { logs, spans } = captured('compaction');
    const fromLogs = normalizeLogs(logs, CTX);
    const fromSpans = normalizeSpans(spans, CTX);
    // an auto compaction and a manual /compact on resume; before, each was stored twice
    expect(
      [...fromLogs.normalized.compactions, ...fromSpans.normalized.compactions].map((c) => [
        c.evidence,
        c.trigger,
        c.tokensBefore,
        c.tokensAfter,
      ]),
    ).toEqual([
      ['claude_code_event', 'auto', 172_047, 746],
      ['claude_code_event', 'manual', 749, 662],
    ]);
    // the summarising requests are side calls
    expect(fromLogs.sideCalls.map((s) => s.reason)).toEqual(['compact', 'compact']);
  });

  it('a request refused with HTTP 400 "prompt is too long" is a context_overflow call', () => {
    const { spans, logs } = captured('overflow');
    const failed = normalizeSpans(spans, CTX).normalized.calls.filter(
      (c) => c.contextTokens === null,
    );
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      finishReasonRaw: 'prompt is too long: 212000 tokens > 200000 maximum',
      finishClass: 'context_overflow',
      requestModel: 'claude-sonnet-4-5',
    });
    // the api_error event alone (logs without spans) says the same, for the same request
    const fromLogs = normalizeLogs(logs, CTX).normalized.calls.filter(
      (c) => c.finishClass === 'context_overflow',
    );
    expect(fromLogs.map((c) => c.requestId)).toEqual([failed[0]!.requestId]);
  });

  it('plain spans do not say whether a cut output was a tool call; beta tracing does', () => {
    const plain = normalizeSpans(captured('cut-plain').spans, CTX).normalized.calls;
    expect(mainCalls(plain).map((c) => [c.finishReasonRaw, c.outputToolCall])).toEqual([
      ['max_tokens', null],
      ['max_tokens', null],
      ['end_turn', null],
    ]);
    const beta = normalizeSpans(captured('cut-beta').spans, CTX).normalized.calls;
    expect(mainCalls(beta).map((c) => [c.finishReasonRaw, c.outputToolCall])).toEqual([
      ['max_tokens', false],
      ['max_tokens', true],
      ['end_turn', false],
    ]);
  });

  it('beta tracing: the system prompt size from system_prompt_length, in estimated tokens; plain: unknown', () => {
    const beta = mainCalls(normalizeSpans(captured('cut-beta').spans, CTX).normalized.calls);
    expect(beta[0]?.parts).toEqual({
      unit: 'tokens',
      total: null,
      system: Math.round(26_585 / 4),
      tools: {},
      source: 'tool_spans',
      estimatedFrom: 'bytes',
    });
    const plain = mainCalls(normalizeSpans(captured('cut-plain').spans, CTX).normalized.calls);
    expect(plain.map((c) => c.parts)).toEqual([null, null, null]);
  });

  it('tool results come only from tool_result events, in bytes; the tool spans carry no size', () => {
    const { spans, logs } = captured('large-results');
    const fromSpans = normalizeSpans(spans, CTX).normalized.toolResults;
    expect(fromSpans.map((r) => [r.toolName, r.resultSize])).toEqual([
      ['Read', null],
      ['Read', null],
      ['Bash', null],
      ['Bash', null],
    ]);
    const fromLogs = normalizeLogs(logs, CTX).normalized.toolResults;
    expect(fromLogs.map((r) => [r.toolName, r.resultSize, r.sizeUnit])).toEqual([
      ['Read', 85_171, 'bytes'],
      ['Read', 85_171, 'bytes'],
      ['Bash', 24_598, 'bytes'],
      ['Bash', 11, 'bytes'],
    ]);
  });

  it('windows: spans say claude-opus-4-8[1m]; events say claude-opus-4-8, 1M in Claude Code 2.1.197 (assumed without a version), not 200k', () => {
    const { spans, logs } = captured('large-results');
    const span = normalizeSpans(spans, CTX).normalized.calls[0]!;
    const log = normalizeLogs(logs, CTX).normalized.calls[0]!;
    expect([span.requestModel, span.contextWindow, span.windowSource, span.agentVersion]).toEqual([
      'claude-opus-4-8[1m]',
      1_000_000,
      'model_id',
      '2.1.197',
    ]);
    // the catalog row for Claude Code 2.1.167+ (issue 19 §3), by the resource's service.version
    expect([log.requestModel, log.contextWindow, log.windowSource, log.agentVersion]).toEqual([
      'claude-opus-4-8',
      1_000_000,
      'catalog',
      '2.1.197',
    ]);
    expect(assumedWindow('claude-opus-4-8')).toBe(1_000_000);
    expect(assumedWindow('claude-sonnet-4-6')).toBeNull();
    expect(contextWindowFor('claude-sonnet-4-6', 20_000, [])).toEqual({
      window: 200_000,
      source: 'catalog',
    });
    // an override still wins over the assumption
    expect(
      contextWindowFor('claude-opus-4-8', 20_000, [{ model: 'claude-opus-*', window: 200_000 }]),
    ).toEqual({ window: 200_000, source: 'override' });
  });

  it("the transcript: its compactions, and calls keyed by the lines' sessionId, not the file name", () => {
    const text = readFileSync(join(DIR, 'compaction/transcript.jsonl'), 'utf8');
    const r = normalizeTranscript(text, CTX, { sessionId: 'the-file-name' });
    expect(new Set(r.calls.map((c) => c.conversationId))).toEqual(
      new Set(['b65632f5-baa4-4ca8-a5cb-323b2adfd76d']),
    );
    expect(r.compactions.map((c) => [c.trigger, c.tokensBefore, c.tokensAfter])).toEqual([
      ['auto', 172_047, 746],
      ['manual', 14_040, 662],
    ]);
  });
});

describe('transcript usage that is no measurement', () => {
  const SID = 'sess-zero';
  const line = (o: Record<string, unknown>, i: number) =>
    JSON.stringify({
      sessionId: SID,
      uuid: `u${i}`,
      timestamp: `2026-01-01T00:00:0${i}.000Z`,
      ...o,
    });
  const assistant = (id: string, usage: Record<string, unknown>, i: number) =>
    line(
      {
        type: 'assistant',
        message: { id, role: 'assistant', model: 'claude-sonnet-4-6', content: [], usage },
      },
      i,
    );

  it('top-level usage of zeros reads the last type:"message" iteration; all zeros is null, never 0', () => {
    const text = [
      assistant('m1', { input_tokens: 5, cache_read_input_tokens: 150_000, output_tokens: 9 }, 1),
      line(
        { type: 'system', subtype: 'compact_boundary', compactMetadata: { trigger: 'auto' } },
        2,
      ),
      // the preserved tail re-writes an earlier message: zeros on top, the counts in iterations
      assistant(
        'm2',
        {
          input_tokens: 0,
          cache_read_input_tokens: 0,
          cache_creation_input_tokens: 0,
          output_tokens: 0,
          iterations: [
            { type: 'compaction', input_tokens: 140_000, output_tokens: 900 },
            { type: 'message', input_tokens: 3, cache_read_input_tokens: 20_000, output_tokens: 7 },
          ],
        },
        3,
      ),
      assistant('m3', { input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 }, 4),
    ].join('\n');
    const calls = normalizeTranscript(text, CTX).calls;
    expect(calls.map((c) => c.contextTokens)).toEqual([150_005, 20_003, null]);
  });
});
