/**
 * Normalization of what the real Codex CLI 0.171.0 exported and wrote (test/fixtures/real/
 * codex-0.171.0/PROVENANCE.md): each OTLP body is normalized as its own batch, as the receiver
 * does (Codex's batches split turns at 512 spans), and the session file beside it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { normalizeLogs, normalizeSpans } from '../../../src/ingest/index.ts';
import {
  CODEX_TRUNCATED_OUTPUT_BYTES,
  loggedSizeOfResult,
  modelSizeOfResult,
} from '../../../src/ingest/codex.ts';
import {
  isCodexSessionEntry,
  normalizeCodexSession,
  sessionIdFromPath,
} from '../../../src/ingest/codex-sessions.ts';
import type { Compaction, LlmCall, ToolResult } from '../../../src/model/calls.ts';
import type { LogRecord, Span } from '../../../src/model/telemetry.ts';
import { decodeLogs, decodeTraces } from '../../../src/otlp/decode.ts';
import { CTX, NO_CONTENT, span } from './helpers.ts';

const DIR = join(import.meta.dirname, '../../fixtures/real/codex-0.171.0');

interface Captured {
  threadId: string;
  /** Exit code of each run. */
  exits: number[];
  spanBatches: Span[][];
  logBatches: LogRecord[][];
  sessionFile: { path: string; text: string };
}

function captured(scenario: string): Captured {
  const dir = join(DIR, scenario);
  const capture = JSON.parse(readFileSync(join(dir, 'capture.json'), 'utf8')) as {
    runs: Array<{ exitCode: number; events: Array<{ type: string; thread_id?: string }> }>;
  };
  const threadId = capture.runs[0]!.events.find((e) => e.type === 'thread.started')!.thread_id!;
  const out: Captured = {
    threadId,
    exits: capture.runs.map((r) => r.exitCode),
    spanBatches: [],
    logBatches: [],
    sessionFile: { path: '', text: '' },
  };
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith('.br')) continue;
    const raw = brotliDecompressSync(readFileSync(join(dir, f)));
    const name = f.slice(0, -'.br'.length);
    if (name.startsWith('rollout-')) {
      out.sessionFile = { path: join(dir, name), text: raw.toString('utf8') };
      continue;
    }
    const encoding = name.endsWith('.json') ? 'json' : 'protobuf';
    const body = encoding === 'json' ? raw.toString('utf8') : raw;
    if (name.includes('-traces.')) {
      const r = decodeTraces(body, encoding);
      if (!r.ok) throw new Error(`${f}: ${r.reason}`);
      out.spanBatches.push(r.value.items);
    } else {
      const r = decodeLogs(body, encoding);
      if (!r.ok) throw new Error(`${f}: ${r.reason}`);
      out.logBatches.push(r.value.items);
    }
  }
  return out;
}

/** Every batch through the normalizer, as the receiver sees them. */
function fromTelemetry(c: Captured, ctx = CTX) {
  const calls: LlmCall[] = [];
  const toolResults: ToolResult[] = [];
  const compactions: Compaction[] = [];
  let spans = 0;
  let kept = 0;
  for (const batch of c.spanBatches) {
    const b = normalizeSpans(batch, ctx);
    spans += batch.length;
    kept += b.keep.length;
    calls.push(...b.normalized.calls);
    toolResults.push(...b.normalized.toolResults);
    compactions.push(...b.normalized.compactions);
  }
  const logs = c.logBatches.map((batch) => normalizeLogs(batch, ctx));
  return { calls: byStart(calls), toolResults, compactions, spans, kept, logs };
}

const byStart = (calls: LlmCall[]) =>
  [...calls].sort((a, b) => (BigInt(a.startNs) < BigInt(b.startNs) ? -1 : 1));
const main = (calls: LlmCall[]) => calls.filter((c) => c.sideCall === null);

describe('Codex CLI 0.171.0 telemetry, captured from the real CLI', () => {
  it('the call is the completed handle_responses span; model and conversation come from its trace', () => {
    const c = captured('healthy');
    const t = fromTelemetry(c);
    expect(t.calls).toHaveLength(2);
    for (const call of t.calls) {
      expect(call).toMatchObject({
        conversationId: c.threadId,
        conversationSynthetic: false,
        runId: c.threadId,
        streamKey: `${c.threadId}|main`,
        producer: 'codex',
        responseModel: 'gpt-5.5',
        contextWindow: 272_000,
        windowSource: 'catalog',
        usageRule: 'inclusive_attribute',
        agentVersion: '0.171.0',
        finishReasonRaw: null,
        sideCall: null,
      });
      // gen_ai.usage.input_tokens includes the cache
      expect(call.contextTokens).toBe(call.inputTokensRaw);
      expect(call.cacheReadTokens).toBeLessThanOrEqual(call.inputTokensRaw!);
    }
    // one trace per turn, and ~500 internal spans: only the call and tool spans are kept
    expect(new Set(t.calls.map((x) => x.traceId)).size).toBe(1);
    expect(t.spans).toBeGreaterThan(400);
    expect(t.kept).toBeLessThanOrEqual(4);
  });

  it('a turn split over batches keeps its conversation and model', () => {
    const c = captured('compaction');
    expect(c.spanBatches.length).toBeGreaterThan(1);
    const t = fromTelemetry(c);
    expect(t.calls.map((x) => x.contextTokens)).toEqual([
      100_000, 180_000, 236_000, 250_000, 20_000, 21_000,
    ]);
    expect(t.calls.every((x) => x.conversationId === c.threadId && !x.conversationSynthetic)).toBe(
      true,
    );
    expect(t.calls.every((x) => x.responseModel === 'gpt-5.5')).toBe(true);
  });

  it('run_auto_compact / codex.compaction are one compaction; run_pre_sampling_compact is none', () => {
    const c = captured('compaction');
    const names = c.spanBatches.flat().map((s) => s.name);
    // what Codex sent: a pre-sampling "compact" span before every sampling request
    expect(names.filter((n) => n === 'run_pre_sampling_compact').length).toBeGreaterThan(0);
    expect(names.filter((n) => n === 'run_auto_compact')).toHaveLength(1);
    const t = fromTelemetry(c);
    expect(t.compactions).toHaveLength(1);
    expect(t.compactions[0]).toMatchObject({
      conversationId: c.threadId,
      evidence: 'span',
      trigger: 'auto',
    });
    // between the last call before it and the first after it
    const [before, after] = [t.calls[3]!, t.calls[4]!];
    expect(BigInt(t.compactions[0]!.atNs)).toBeGreaterThan(BigInt(before.startNs));
    expect(BigInt(t.compactions[0]!.atNs)).toBeLessThan(BigInt(after.startNs));
    // the summarising request has no call span of its own
    expect(t.calls.every((x) => x.sideCall === null)).toBe(true);
  });

  it('tool results count what the model got: a truncated 410 KB output is ~10k tokens', () => {
    const c = captured('tool-takeover');
    const events = c.spanBatches
      .flat()
      .flatMap((s) => s.events)
      .filter((e) => e.attributes['event.name'] === 'codex.tool_result');
    // what Codex sent: the raw length, and that it truncated
    expect(
      events.map((e) => [Number(e.attributes['output_length']), e.attributes['output_truncated']]),
    ).toEqual([
      [expect.any(Number), true],
      [expect.any(Number), true],
      [expect.any(Number), false],
    ]);
    expect(Number(events[0]!.attributes['output_length'])).toBeGreaterThan(400_000);
    const t = fromTelemetry(c);
    expect(t.toolResults.map((r) => r.resultSize)).toEqual([
      CODEX_TRUNCATED_OUTPUT_BYTES,
      CODEX_TRUNCATED_OUTPUT_BYTES,
      expect.any(Number),
    ]);
    // the log event (no output_length, a preview) gives the same rows: one per call id
    const logged = t.logs.flatMap((l) => l.normalized.toolResults);
    const key = (r: ToolResult) => `${r.traceId}:${r.spanId}:${r.atNs}:${r.resultSize}`;
    expect(logged.map(key).sort()).toEqual(t.toolResults.map(key).sort());
    // the session file: what the model got, exactly (the budget plus Codex's header lines)
    const file = normalizeCodexSession(c.sessionFile.text, CTX, c.sessionFile.path);
    const sizes = file.toolResults.map((r) => r.resultSize!);
    expect(sizes[0]).toBeGreaterThan(CODEX_TRUNCATED_OUTPUT_BYTES);
    expect(sizes[0]).toBeLessThan(CODEX_TRUNCATED_OUTPUT_BYTES + 400);
  });

  it('only codex.tool_result log events are kept, without content unless captured', () => {
    const c = captured('tool-takeover');
    const all = c.logBatches.flat();
    const kept = c.logBatches.flatMap((b) => normalizeLogs(b, NO_CONTENT).keep);
    expect(kept.length).toBe(3);
    expect(kept.length).toBeLessThan(all.length);
    for (const record of kept) {
      expect(record.attributes['event.name']).toBe('codex.tool_result');
      expect(record.attributes['output']).toBeUndefined();
      expect(record.attributes['arguments']).toBeUndefined();
    }
    const withContent = c.logBatches.flatMap((b) => normalizeLogs(b, CTX).keep);
    expect(withContent.every((r) => typeof r.attributes['output'] === 'string')).toBe(true);
  });

  it('a resumed session is one conversation over two traces', () => {
    const c = captured('resumed');
    const t = fromTelemetry(c);
    expect(t.calls).toHaveLength(4);
    expect(new Set(t.calls.map((x) => x.conversationId))).toEqual(new Set([c.threadId]));
    expect(new Set(t.calls.map((x) => x.traceId)).size).toBe(2);
  });

  it('a run whose turn is cut exports nothing: telemetry holds only the run before it', () => {
    const c = captured('cut-off');
    expect(c.exits).toEqual([0, 1, 1]);
    const t = fromTelemetry(c);
    expect(t.calls).toHaveLength(2);
    expect(t.calls.every((x) => x.finishReasonRaw === null && x.finishClass === null)).toBe(true);
  });
});

describe('Codex CLI 0.171.0 session files', () => {
  it('are told apart from Claude Code transcripts by their entries; the file name holds the id', () => {
    const c = captured('healthy');
    const first = JSON.parse(c.sessionFile.text.split('\n')[0]!) as unknown;
    expect(isCodexSessionEntry(first)).toBe(true);
    expect(isCodexSessionEntry({ type: 'user', message: {} })).toBe(false);
    expect(sessionIdFromPath(c.sessionFile.path)).toBe(c.threadId);
  });

  it('calls with usage and the window Codex reports, keyed as their telemetry', () => {
    for (const scenario of ['healthy', 'near-window', 'tool-takeover', 'compaction', 'resumed']) {
      const c = captured(scenario);
      const file = normalizeCodexSession(c.sessionFile.text, CTX, c.sessionFile.path);
      const telemetry = fromTelemetry(c).calls;
      for (const call of file.calls) {
        expect(call).toMatchObject({
          conversationId: c.threadId,
          runId: c.threadId,
          producer: 'codex_session',
          responseModel: 'gpt-5.5',
          contextWindow: 258_400,
          windowSource: 'agent',
          agentVersion: '0.171.0',
        });
      }
      // one request read from both is one call: the same request identity, the same trace
      expect(
        main(file.calls).map((x) => x.requestId),
        scenario,
      ).toEqual(telemetry.map((x) => x.requestId));
      expect(
        main(file.calls).map((x) => x.traceId),
        scenario,
      ).toEqual(telemetry.map((x) => x.traceId));
      expect(main(file.calls).map((x) => x.contextTokens)).toEqual(
        telemetry.map((x) => x.contextTokens),
      );
    }
  });

  it('a compacted item is the compaction, its summarising request a side call', () => {
    const c = captured('compaction');
    const file = normalizeCodexSession(c.sessionFile.text, CTX, c.sessionFile.path);
    const side = file.calls.filter((x) => x.sideCall !== null);
    expect(side.map((x) => [x.sideCall, x.contextTokens])).toEqual([['compact', 250_500]]);
    expect(file.compactions).toHaveLength(1);
    expect(file.compactions[0]).toMatchObject({
      evidence: 'transcript_boundary',
      tokensBefore: 250_000,
      messagesKept: 4,
    });
    // the same compaction as the telemetry's
    expect(file.compactions[0]!.sourceKey).toBe(fromTelemetry(c).compactions[0]!.sourceKey);
    // content only when captured
    expect(file.compactions[0]!.summary).toContain('Summary: ran ls');
    expect(normalizeCodexSession(c.sessionFile.text, NO_CONTENT, '').compactions[0]!.summary).toBe(
      null,
    );
  });

  it('"Incomplete response returned, reason: max_output_tokens" cuts the turn\'s last response', () => {
    const c = captured('cut-off');
    const file = normalizeCodexSession(c.sessionFile.text, CTX, c.sessionFile.path);
    expect(file.calls.map((x) => [x.contextTokens, x.finishReasonRaw, x.outputToolCall])).toEqual([
      [23_000, null, true],
      [23_500, null, false],
      // the file keeps no output of a cut response: text or tool call is unknown
      [24_000, 'max_output_tokens', null],
      [25_000, 'max_output_tokens', null],
    ]);
    expect(file.calls[2]!.finishClass).toBe('output_limit');
  });

  it('tool outputs go to the next call as estimated tokens of what the model got', () => {
    const c = captured('tool-takeover');
    const file = normalizeCodexSession(c.sessionFile.text, CTX, c.sessionFile.path);
    expect(file.calls.map((x) => x.parts?.tools['exec_command'] ?? null)).toEqual([
      null,
      expect.any(Number),
      expect.any(Number),
      expect.any(Number),
    ]);
    expect(file.calls[1]!.parts).toMatchObject({ source: 'tool_spans', estimatedFrom: 'bytes' });
    expect(file.calls[1]!.parts!.tools['exec_command']).toBeGreaterThan(10_000);
    expect(file.calls.map((x) => x.outputToolName)).toEqual([
      'exec_command',
      'exec_command',
      'exec_command',
      null,
    ]);
  });
});

describe('Codex tool result sizes', () => {
  it('a truncated output counts the truncation budget, a short one its length', () => {
    expect(modelSizeOfResult(400_106, true)).toBe(40_000);
    expect(modelSizeOfResult(250, false)).toBe(250);
    expect(modelSizeOfResult(null, false)).toBe(null);
  });

  it('a log preview stands for its header and 4 bytes per original token when cut', () => {
    const header = 'Chunk ID: ef9cb5\nWall time: 0.0000 seconds\nProcess exited with code 0\n';
    const cut = `${header}Original token count: 7500\nOutput:\nINFO...\n[... telemetry preview truncated ...]`;
    const body = cut.indexOf('Output:\n') + 'Output:\n'.length;
    expect(loggedSizeOfResult(cut, false)).toBe(body + 30_000);
    expect(loggedSizeOfResult(cut.replace('7500', '100000'), true)).toBe(40_000);
    const whole = `${header}Original token count: 2\nOutput:\nok\n`;
    expect(loggedSizeOfResult(whole, false)).toBe(whole.length);
    expect(loggedSizeOfResult(null, false)).toBe(null);
  });
});

describe('Codex spans alone in a batch', () => {
  const resource = { 'service.name': 'codex_exec', 'service.version': '0.171.0' };
  const call = span({
    name: 'handle_responses',
    resource,
    parentSpanId: 'f'.repeat(16),
    attributes: {
      'gen_ai.usage.input_tokens': '30000',
      'gen_ai.usage.cache_read.input_tokens': '29000',
      'gen_ai.usage.output_tokens': '20',
    },
  });

  it('a call whose turn is in another batch is grouped by its trace, with no window (no guess)', () => {
    const { normalized, keep, dropped } = normalizeSpans(
      [call, span({ name: 'run_pre_sampling_compact', resource })],
      CTX,
    );
    expect(normalized.calls).toHaveLength(1);
    expect(normalized.calls[0]).toMatchObject({
      conversationId: call.traceId,
      conversationSynthetic: true,
      responseModel: null,
      contextWindow: null,
      windowSource: null,
      contextTokens: 30_000,
    });
    expect(normalized.compactions).toEqual([]);
    expect([keep.length, dropped]).toEqual([1, 1]);
  });

  it('any span or event of the trace in the batch names the conversation and the model', () => {
    const sampling = span({
      name: 'codex.sampling',
      resource,
      attributes: { 'conversation.id': 'thread-1' },
      events: [
        {
          name: 'event',
          timeUnixNano: '1',
          attributes: { 'event.name': 'codex.api_request', model: 'gpt-5.5' },
        },
      ],
    });
    const { normalized } = normalizeSpans([call, sampling], CTX);
    expect(normalized.calls[0]).toMatchObject({
      conversationId: 'thread-1',
      conversationSynthetic: false,
      responseModel: 'gpt-5.5',
      contextWindow: 272_000,
    });
  });
});
