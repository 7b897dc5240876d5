/**
 * Normalization of what the real Gemini CLI 0.61.0 exported (captured by the real-CLI scenarios,
 * test/fixtures/real/gemini-cli-0.61.0/PROVENANCE.md): OTLP/JSON bodies as the CLI sent them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { normalizeLogs, normalizeSpans } from '../../../src/ingest/index.ts';
import { GEMINI_API_RESPONSE, outputFunctionCall } from '../../../src/ingest/gemini.ts';
import type { LlmCall } from '../../../src/model/calls.ts';
import type { LogRecord, Span } from '../../../src/model/telemetry.ts';
import { decodeLogs, decodeTraces } from '../../../src/otlp/decode.ts';
import { CTX, NO_CONTENT, log } from './helpers.ts';

const DIR = join(import.meta.dirname, '../../fixtures/real/gemini-cli-0.61.0');

/** One captured session: its bodies in arrival order, decoded as the receiver decodes them. */
function captured(name: string): { spans: Span[]; logBatches: LogRecord[][] } {
  const spans: Span[] = [];
  const logBatches: LogRecord[][] = [];
  for (const f of readdirSync(join(DIR, name)).sort()) {
    const body = gunzipSync(readFileSync(join(DIR, name, f))).toString('utf8');
    if (f.includes('-traces.')) {
      const r = decodeTraces(body, 'json');
      if (!r.ok) throw new Error(`${f}: ${r.reason}`);
      spans.push(...r.value.items);
    } else if (f.includes('-logs.')) {
      const r = decodeLogs(body, 'json');
      if (!r.ok) throw new Error(`${f}: ${r.reason}`);
      logBatches.push(r.value.items);
    }
  }
  return { spans, logBatches };
}

const byStart = (calls: LlmCall[]) =>
  [...calls].sort((a, b) => (BigInt(a.startNs) < BigInt(b.startNs) ? -1 : 1));

describe('Gemini CLI 0.61.0, captured from the real CLI', () => {
  it('llm_call spans are calls of one conversation and one run: the session', () => {
    const { spans } = captured('cut-off');
    const batch = normalizeSpans(spans, CTX);
    const calls = byStart(batch.normalized.calls);
    expect(calls).toHaveLength(3);
    const session = calls[0]!.conversationId;
    // three traces (a call is a trace of its own), one conversation across --resume
    expect(new Set(calls.map((c) => c.traceId)).size).toBe(3);
    for (const c of calls) {
      expect(c).toMatchObject({
        producer: 'gemini_cli',
        conversationId: session,
        conversationSynthetic: false,
        runId: session,
        streamKey: `${session}|main`,
        requestModel: 'gemini-2.5-pro',
        contextWindow: 1_048_576,
        usageRule: 'no_cache',
        // no finish reason on the span: it comes from the api_response logs
        finishReasonRaw: null,
      });
      // the system prompt's size, whole on every span; tool sizes come from the logs
      expect(c.parts).toMatchObject({ unit: 'tokens', source: 'tool_spans', tools: {} });
      expect(c.parts!.system).toBeGreaterThan(5_000);
    }
    expect(calls.map((c) => [c.contextTokens, c.outputTokens])).toEqual([
      [24_000, 8_192],
      [24_600, 8_192],
      [25_100, 40],
    ]);
    // the span's output (prompt logging on) says the second call wrote a function call
    expect(calls.map((c) => [c.outputToolCall, c.outputToolName])).toEqual([
      [false, null],
      [true, 'write_file'],
      [false, null],
    ]);
    // the tool batch: a tool span, its scheduler an agent step
    const roles = new Map(batch.keep.map((s) => [s.name, s.role]));
    expect(roles.get('tool_call')).toBe('tool');
    expect(roles.get('schedule_tool_calls')).toBe('agent_step');
  });

  it('finish reasons come from api_response logs, joined to their request by session, prompt, role and model', () => {
    const { spans, logBatches } = captured('cut-off');
    const calls = byStart(normalizeSpans(spans, CTX).normalized.calls);
    const finishes = logBatches.flatMap((logs) => {
      const batch = normalizeLogs(logs, CTX);
      // request and response of each call came in one batch: none left for the store
      expect(batch.gemini?.pending).toEqual([]);
      // the streamed responses had no span context; stored, they carry their request's ids
      const responses = batch.keep.filter((r) => r.eventName === GEMINI_API_RESPONSE);
      expect(responses.every((r) => r.traceId !== null && r.spanId !== null)).toBe(true);
      return batch.gemini!.facts.filter((f) => f.finish !== undefined);
    });
    // each call's facts name the call's own span; [stop, stop, length] is a cut
    expect(
      finishes.map((f) => [
        calls.findIndex((c) => c.traceId === f.traceId && c.spanId === f.spanId),
        f.finish!.finishReasonRaw,
        f.finish!.finishClass,
        f.finish!.outputToolCall,
        f.finish!.outputToolName,
      ]),
    ).toEqual([
      [0, 'length', 'output_limit', false, null],
      [1, 'length', 'output_limit', true, 'write_file'],
      [2, 'stop', 'stop', false, null],
    ]);
    const raw = logBatches[0]!.find((r) => r.eventName === GEMINI_API_RESPONSE)!;
    expect(raw.attributes.finish_reasons).toEqual(['stop', 'stop', 'length']);
    expect(raw.traceId).toBeNull();
  });

  it('without prompt logging, whether a cut output was a function call is unknown', () => {
    const { spans, logBatches } = captured('cut-off-no-prompts');
    const calls = byStart(normalizeSpans(spans, CTX).normalized.calls);
    expect(calls.map((c) => c.outputToolCall)).toEqual([null, null, null]);
    const finishes = logBatches.flatMap(
      (logs) =>
        normalizeLogs(logs, CTX).gemini?.facts.flatMap((f) => (f.finish ? [f.finish] : [])) ?? [],
    );
    expect(finishes.map((f) => [f.finishReasonRaw, f.outputToolCall])).toEqual([
      ['length', null],
      ['length', null],
      ['stop', null],
    ]);
  });

  it('a response of a later batch than its request is left for the store to join', () => {
    const { logBatches } = captured('cut-off');
    const logs = logBatches[0]!;
    const at = logs.findIndex((r) => r.eventName === GEMINI_API_RESPONSE);
    const first = normalizeLogs(logs.slice(0, at), CTX);
    const second = normalizeLogs(logs.slice(at), CTX);
    expect(first.gemini?.facts.map((f) => f.role)).toEqual(['main']);
    expect(second.gemini?.pending).toHaveLength(1);
    const pending = second.gemini!.pending[0]!;
    expect(pending.key).toMatchObject({ role: 'main', model: 'gemini-2.5-pro' });
    expect(pending.key.sessionId).toBe(pending.key.promptId); // -p mode: the prompt id is the session
    expect(pending.finish.finishReasonRaw).toBe('length');
    expect(second.keep[pending.keepIndex]!.eventName).toBe(GEMINI_API_RESPONSE);
  });

  it('the compressor: two utility_compressor side calls, a chat_compression compaction', () => {
    const { spans, logBatches } = captured('compression');
    const calls = byStart(normalizeSpans(spans, CTX).normalized.calls);
    expect(calls.map((c) => c.contextTokens)).toEqual([
      200_000, 260_000, 320_000, 380_000, 380_500, 380_900, 14_000,
    ]);
    const batches = logBatches.map((logs) => normalizeLogs(logs, CTX));
    const roles = batches.flatMap((b) => b.gemini!.facts.filter((f) => f.role !== undefined));
    const roleOf = (c: LlmCall) =>
      roles.find((f) => f.traceId === c.traceId && f.spanId === c.spanId)?.role;
    expect(calls.map(roleOf)).toEqual([
      'main',
      'main',
      'main',
      'main',
      'utility_compressor',
      'utility_compressor',
      'main',
    ]);
    const compactions = batches.flatMap((b) => b.normalized.compactions);
    expect(
      compactions.map((c) => [c.evidence, c.kind, c.tokensBefore, c.tokensAfter, c.streamKey]),
    ).toEqual([
      ['gemini_cli_event', 'summarize', 124_530, 169, `${calls[0]!.conversationId}|main`],
    ]);
    // the compression sits between the compressor's calls and the next main-thread call
    expect(BigInt(compactions[0]!.atNs)).toBeGreaterThan(BigInt(calls[5]!.endNs));
    expect(BigInt(compactions[0]!.atNs)).toBeLessThan(BigInt(calls[6]!.startNs));
    // each read_file result: the characters the model got
    const tools = batches.flatMap((b) => b.normalized.toolResults);
    expect(tools.map((t) => [t.toolName, t.resultSize, t.sizeUnit, t.source])).toEqual([
      ['read_file', 81_999, 'chars', 'gemini_cli_log'],
      ['read_file', 81_999, 'chars', 'gemini_cli_log'],
      ['read_file', 81_999, 'chars', 'gemini_cli_log'],
    ]);
  });

  it("the router's call (default model) is a side call, answered inside its span", () => {
    const { spans, logBatches } = captured('healthy');
    const calls = byStart(normalizeSpans(spans, CTX).normalized.calls);
    expect(calls.map((c) => c.requestModel)).toEqual([
      'gemini-3.5-flash-lite',
      'gemini-3.1-pro-preview',
      'gemini-3.1-pro-preview',
    ]);
    const facts = logBatches.flatMap((logs) => normalizeLogs(logs, CTX).gemini!.facts);
    const router = facts.filter((f) => f.traceId === calls[0]!.traceId);
    expect(router.map((f) => f.role ?? f.finish?.finishReasonRaw)).toEqual([
      'utility_router',
      'stop',
    ]);
  });

  it('without content capture the stored records lose the prompt, request and response texts', () => {
    const { logBatches } = captured('cut-off');
    const kept = logBatches.flatMap((logs) => normalizeLogs(logs, NO_CONTENT).keep);
    for (const r of kept) {
      for (const k of ['request_text', 'response_text', 'function_args', 'prompt'])
        expect(r.attributes[k], `${r.eventName} ${k}`).toBeUndefined();
    }
    // the facts were read before: the cut function call is still known
    const finishes = logBatches.flatMap((logs) =>
      normalizeLogs(logs, NO_CONTENT).gemini!.facts.flatMap((f) => (f.finish ? [f.finish] : [])),
    );
    expect(finishes.map((f) => f.outputToolCall)).toEqual([false, true, false]);
  });

  it('tool-output masking is a compaction too; a failed compression is none (events as 0.61.0 defines them)', () => {
    const at = (ms: number, name: string, attrs: Record<string, number>) =>
      log({
        timeUnixNano: `${ms}000000`,
        eventName: name,
        scope: { name: 'gemini-cli', version: '' },
        attributes: { 'session.id': 's1', 'event.name': name, ...attrs },
      });
    const batch = normalizeLogs(
      [
        at(1_000, 'gemini_cli.tool_output_masking', {
          tokens_before: 90_000,
          tokens_after: 12_000,
          masked_count: 3,
          total_prunable_tokens: 60_000,
        }),
        // an empty summary: the CLI logs the count unchanged and keeps the history
        at(2_000, 'gemini_cli.chat_compression', { tokens_before: 50_000, tokens_after: 50_000 }),
      ],
      CTX,
    );
    expect(
      batch.normalized.compactions.map((c) => [c.kind, c.trigger, c.tokensBefore, c.tokensAfter]),
    ).toEqual([['clear_tool_results', 'auto', 90_000, 12_000]]);
  });

  it('reads a function call from text the CLI cut at 10,000 characters', () => {
    const whole = JSON.stringify([
      { parts: [{ text: 'x'.repeat(10) }, { functionCall: { name: 'read_file', args: {} } }] },
    ]);
    expect(outputFunctionCall(whole)).toEqual({ toolCall: true, name: 'read_file' });
    expect(outputFunctionCall(`${whole.slice(0, 80)}...[TRUNCATED: original length 9999]`)).toEqual(
      {
        toolCall: true,
        name: 'read_file',
      },
    );
    expect(outputFunctionCall('[{"parts":[{"text":"hi"}]}]')).toEqual({
      toolCall: false,
      name: null,
    });
    expect(outputFunctionCall(undefined)).toBeNull();
  });
});
