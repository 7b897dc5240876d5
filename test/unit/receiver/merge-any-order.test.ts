/**
 * One call, one row and one compaction, one row, whatever the order (DESIGN §5, issue 19 §4):
 * properties over the pure merge rules (src/receiver/merge-rules.ts). Each batch is applied to
 * an in-memory model of the rows the store holds, as src/receiver/merge-writes.ts has the store
 * apply what the rules decided (deletes, inserts skipped on their key, updates keeping stored
 * input messages), with the log path's side-call marks and reported costs
 * (src/store/ingest.ts setSideCall, fillReportedCosts). Every arrangement of the same sources,
 * split into batches in any way, each batch sent once or more, ends in the same rows.
 *
 * What the model leaves out, kept end to end (test/integration/one-session-one-row.test.ts,
 * the real session through the real store and evaluator): the sizes joined to calls from
 * logged tool results (src/receiver/logged-tool-parts.ts, SQL over the stored results), the
 * findings and their anchors, deliveries. The conversations with logged tool results are
 * fixed per world here (`logged`), as they are once the logs that carry them are stored.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LOG_CALL_PRODUCERS, IMPORT_CALL_PRODUCERS } from '../../../src/ingest/producers.ts';
import type { Compaction, InputParts, LlmCall } from '../../../src/model/calls.ts';
import {
  canonicalJson,
  conversationsToCheckForResults,
  finishCallMerge,
  planCallMerge,
  planCompactions,
  type CallPrecedence,
} from '../../../src/receiver/merge-rules.ts';
import type { CallRow, CompactionRow } from '../../../src/store/ingest.ts';
import { compactionRow, llmCallRow } from '../../../src/store/timeline.ts';
import { call, T0 } from '../../helpers/calls.ts';

/** As the receiver's pipeline has them (src/receiver/pipeline.ts). */
const PRECEDENCE: CallPrecedence = {
  logProducers: LOG_CALL_PRODUCERS,
  importProducers: IMPORT_CALL_PRODUCERS,
  partsResultSources: ['claude_code_log'],
  settleMs: () => 0,
};

const SPAN = 'claude_code';
const LOG = 'claude_code_log';
const IMPORT = 'claude_code_transcript';
/** Every source of a call, in the three ranks: spans > log events > imports. */
const SOURCES = [SPAN, LOG, IMPORT] as const;
type Source = (typeof SOURCES)[number];

// ---------------------------------------------------------------------------------------------
// The store's call rows, modelled

type Rows = Map<string, CallRow>;
const keyOf = (r: { trace_id: string; span_id: string; start_ns: unknown }) =>
  `${r.trace_id}:${r.span_id}:${String(r.start_ns)}`;

/** A row as the store reads it back: jsonb columns as values, everything else as written. */
function rowOf(c: LlmCall, imported: unknown): CallRow {
  return {
    ...llmCallRow(c),
    parts: c.parts,
    imported: imported ?? null,
    created_at: new Date(0),
  } as unknown as CallRow;
}

/** An insert that skips a row whose key exists (a re-sent row; staging's ON CONFLICT DO NOTHING). */
function insert(rows: Rows, row: CallRow): void {
  if (!rows.has(keyOf(row))) rows.set(keyOf(row), row);
}

/** src/receiver/merge-writes.ts insertCalls, on the model. */
function insertCalls(rows: Rows, calls: readonly LlmCall[], logged: ReadonlySet<string>): void {
  if (calls.length === 0) return;
  const requests = new Set(calls.flatMap((c) => (c.requestId === null ? [] : [c.requestId])));
  const existing = [...rows.values()].filter((r) => requests.has(r.request_id!));
  if (existing.length === 0) {
    for (const c of calls) insert(rows, rowOf(c, null));
    return;
  }
  const plan = planCallMerge(calls, existing, PRECEDENCE);
  const withResults = new Set(conversationsToCheckForResults(plan).filter((c) => logged.has(c)));
  const writes = finishCallMerge(plan, withResults, PRECEDENCE);
  for (const row of writes.gone) rows.delete(keyOf(row));
  for (const c of plan.fresh) insert(rows, rowOf(c, null));
  for (const { call: c, imported } of writes.replacements) insert(rows, rowOf(c, imported));
  for (const { row, call: c, imported } of writes.updates) {
    const stored = rows.get(keyOf(row))!;
    const { input_messages, ...fields } = llmCallRow(c);
    for (const column of ['workspace_id', 'trace_id', 'span_id', 'start_ns', 'end_ns'] as const)
      delete (fields as Record<string, unknown>)[column];
    rows.set(keyOf(row), {
      ...stored,
      ...fields,
      // not written by the update: the row's identity and what no merge changes
      conversation_id: stored.conversation_id,
      stream_key: stored.stream_key,
      run_id: stored.run_id,
      producer: stored.producer,
      provider: stored.provider,
      parent_span_id: stored.parent_span_id,
      agent_id: stored.agent_id,
      conversation_synthetic: stored.conversation_synthetic,
      request_id: stored.request_id,
      cost_usd: stored.cost_usd,
      parts: c.parts,
      imported,
      input_messages: stored.input_messages ?? input_messages,
    } as CallRow);
  }
}

/** The log path's extra writes (src/store/ingest.ts setSideCall, fillReportedCosts). */
function logExtras(rows: Rows, calls: readonly LlmCall[]): void {
  for (const c of calls) {
    for (const [key, row] of rows) {
      if (row.request_id !== c.requestId) continue;
      const next = { ...row };
      if (c.sideCall !== null && next.side_call === null) {
        next.side_call = c.sideCall;
        const parts = next.parts as InputParts | null;
        if (parts?.estimatedFrom === 'bytes' && parts.source === 'tool_spans') next.parts = null;
      }
      if (c.costUsd !== undefined && next.cost_usd === null) next.cost_usd = c.costUsd;
      rows.set(key, next);
    }
  }
}

/** One batch of one source, as its route stores it. */
function apply(rows: Rows, source: Source, calls: readonly LlmCall[], logged: ReadonlySet<string>) {
  insertCalls(rows, calls, logged);
  if (source === LOG) logExtras(rows, calls);
}

/** The rows, as compared: sorted by key, jsonb compared as values. */
const snapshot = (rows: Rows) =>
  [...rows.keys()].sort().map((k) => canonicalJson({ ...rows.get(k)!, created_at: null }));

// ---------------------------------------------------------------------------------------------
// Worlds: requests, each told by some of the three sources

const estimated: fc.Arbitrary<InputParts> = fc.record({
  unit: fc.constant('tokens' as const),
  total: fc.option(fc.nat(50_000), { nil: null }),
  system: fc.constant(null),
  tools: fc.dictionary(fc.constantFrom('Read', 'Bash', 'Write'), fc.nat(20_000), { maxKeys: 2 }),
  source: fc.constant('estimated' as const),
});

/** What one source says of a request: the fields that differ between sources. */
const said = fc.record({
  contextTokens: fc.option(fc.nat(150_000), { nil: null }),
  outputTokens: fc.option(fc.nat(8_000), { nil: null }),
  finish: fc.constantFrom(
    { finishReasonRaw: null, finishClass: null },
    { finishReasonRaw: 'end_turn', finishClass: 'stop' as const },
    { finishReasonRaw: 'max_tokens', finishClass: 'output_limit' as const },
  ),
  outputToolCall: fc.option(fc.boolean(), { nil: null }),
  outputToolName: fc.option(fc.constantFrom('Write', 'Bash'), { nil: null }),
  maxOutputTokens: fc.option(fc.constantFrom(8_192, 32_000), { nil: null }),
  compacted: fc.boolean(),
  contextWindow: fc.option(fc.constantFrom(200_000, 1_000_000), { nil: null }),
  agentVersion: fc.option(fc.constantFrom('2.1.197', '2.1.332'), { nil: null }),
  /** Whether this source says the request was a side call (when it was one). */
  saysSideCall: fc.boolean(),
  costUsd: fc.option(fc.double({ min: 0, max: 5, noNaN: true }), { nil: undefined }),
  parts: fc.option(estimated, { nil: null }),
  inputMessages: fc.option(fc.constant({ messages: [{ role: 'user', text: 'hi' }] }), {
    nil: undefined,
  }),
});

type Said = typeof said extends fc.Arbitrary<infer T> ? T : never;

interface Request {
  conversation: string;
  /** Whether it was a side call, and why: one answer, whichever source gives it. */
  sideCall: string | null;
  sources: Partial<Record<Source, Said>>;
}

/**
 * What telemetry a conversation's agent sends (Claude Code: spans and log events of every
 * request, or log events only, or nothing), and which of its requests a transcript holds.
 * Telemetry is complete within a conversation: an exporter sends every request it made, in
 * whatever batches and order.
 */
const TELEMETRY = {
  both: [SPAN, LOG],
  logs: [LOG],
  spans: [SPAN],
  none: [],
} as const satisfies Record<string, readonly Source[]>;

const requests: fc.Arbitrary<Request[]> = fc
  .record({
    telemetry: fc.record({
      c1: fc.constantFrom(...(Object.keys(TELEMETRY) as Array<keyof typeof TELEMETRY>)),
      c2: fc.constantFrom(...(Object.keys(TELEMETRY) as Array<keyof typeof TELEMETRY>)),
    }),
    requests: fc.array(
      fc.record({
        conversation: fc.constantFrom('c1' as const, 'c2' as const),
        imported: fc.boolean(),
        sideCall: fc.option(fc.constantFrom('compact', 'title'), { nil: null }),
        said: fc.record({ [SPAN]: said, [LOG]: said, [IMPORT]: said }),
      }),
      { minLength: 1, maxLength: 4 },
    ),
  })
  .map(({ telemetry, requests }) =>
    requests.map((r) => ({
      conversation: r.conversation,
      sideCall: r.sideCall,
      sources: Object.fromEntries(
        (
          [...TELEMETRY[telemetry[r.conversation]], ...(r.imported ? [IMPORT] : [])] as Source[]
        ).map((s) => [s, r.said[s]]),
      ),
    })),
  );

/** The call a source makes of request `i`: its own identity and time, the request's id. */
function callOf(i: number, source: Source, r: Request): LlmCall | undefined {
  const s = r.sources[source];
  if (s === undefined) return undefined;
  const offset = { [SPAN]: 0, [LOG]: 0.25, [IMPORT]: 0.5 }[source];
  const id = { [SPAN]: 'span', [LOG]: 'log', [IMPORT]: 'line' }[source];
  return call(r.conversation, i * 10 + offset, {
    traceId: source === SPAN ? `trace-${r.conversation}` : `${id}-${r.conversation}`,
    spanId: `${id}-${i}`,
    requestId: `req-${i}`,
    streamKey: `${r.conversation}|main`,
    runId: r.conversation,
    producer: source,
    contextTokens: s.contextTokens,
    inputTokensRaw: s.contextTokens,
    outputTokens: s.outputTokens,
    ...s.finish,
    outputToolCall: s.outputToolCall,
    outputToolName: s.outputToolName,
    contextWindow: s.contextWindow,
    windowSource: s.contextWindow === null ? null : 'catalog',
    agentVersion: s.agentVersion,
    maxOutputTokens: s.maxOutputTokens,
    compacted: s.compacted,
    // spans carry no query_source nor cost; transcripts no cost
    sideCall: source === SPAN || !s.saysSideCall ? null : r.sideCall,
    ...(source === LOG && s.costUsd !== undefined ? { costUsd: s.costUsd } : {}),
    // only an import estimates parts from the messages it read (Claude Code's telemetry sends none)
    parts: source === IMPORT ? s.parts : null,
    ...(source === IMPORT && s.inputMessages ? { inputMessages: s.inputMessages } : {}),
  });
}

/** A batch: some calls of one source. */
interface Batch {
  source: Source;
  calls: LlmCall[];
}

/**
 * The sources' calls split into batches (each source's calls in one or two batches, as
 * exporters and `rotscope import` of several files send them), arranged in an order, some sent
 * more than once.
 */
const world = fc
  .record({
    requests,
    logged: fc.subarray(['c1', 'c2']),
    splits: fc.array(fc.nat(4), { minLength: 3, maxLength: 3 }),
  })
  .map(({ requests, logged, splits }) => {
    const batches: Batch[] = [];
    SOURCES.forEach((source, s) => {
      const calls = requests.flatMap((r, i) => callOf(i, source, r) ?? []);
      if (calls.length === 0) return;
      const at = splits[s]! % calls.length;
      for (const part of at === 0 ? [calls] : [calls.slice(0, at), calls.slice(at)])
        batches.push({ source, calls: part });
    });
    return { requests, logged: new Set(logged), batches };
  })
  .filter(({ batches }) => batches.length > 0);

/** An arrangement of the batches: each once, in an order, then some again anywhere. */
const arrangement = (n: number) =>
  fc
    .record({
      order: fc.shuffledSubarray(
        Array.from({ length: n }, (_, i) => i),
        { minLength: n, maxLength: n },
      ),
      again: fc.array(fc.record({ batch: fc.nat(n - 1), at: fc.nat(n) }), { maxLength: 2 }),
    })
    .map(({ order, again }) => {
      const out = [...order];
      for (const { batch, at } of again) out.splice(Math.min(at, out.length), 0, batch);
      return out;
    });

/**
 * Applies the batches in `order`. Claude Code's log batches carry the session's tool results:
 * once one is stored, its conversations have logged results (stored after its calls, in the
 * same transaction: src/receiver/pipeline.ts ingestLogs).
 */
function run(w: { logged: ReadonlySet<string>; batches: Batch[] }, order: readonly number[]) {
  const rows: Rows = new Map();
  const logged = new Set(w.logged);
  for (const i of order) {
    const { source, calls } = w.batches[i]!;
    apply(rows, source, calls, logged);
    if (source === LOG) for (const c of calls) logged.add(c.conversationId);
  }
  return rows;
}

describe('one call, one row, in any order', () => {
  it('every arrangement of the same sources ends in the same rows', () => {
    fc.assert(
      fc.property(
        world.chain((w) =>
          fc.tuple(fc.constant(w), arrangement(w.batches.length), arrangement(w.batches.length)),
        ),
        ([w, a, b]) => {
          expect(snapshot(run(w, b))).toEqual(snapshot(run(w, a)));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('one row per request, taken by its best source, whatever came first', () => {
    fc.assert(
      fc.property(
        world.chain((w) => fc.tuple(fc.constant(w), arrangement(w.batches.length))),
        ([w, order]) => {
          const rows = [...run(w, order).values()];
          w.requests.forEach((r, i) => {
            const mine = rows.filter((row) => row.request_id === `req-${i}`);
            const best = SOURCES.find((s) => r.sources[s] !== undefined);
            expect(mine.map((row) => row.producer)).toEqual(best === undefined ? [] : [best]);
          });
          expect(rows).toHaveLength(
            w.requests.filter((r) => Object.keys(r.sources).length > 0).length,
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Compactions

type CompactionRows = CompactionRow[];

/** src/receiver/merge-writes.ts insertCompactions, on the model. */
function insertCompactions(rows: CompactionRows, compactions: readonly Compaction[]): void {
  if (compactions.length === 0) return;
  const writes = planCompactions('ws', rows, compactions);
  for (const { compaction, sources } of writes.inserts) {
    if (rows.some((r) => r.source_key === compaction.sourceKey)) continue; // ON CONFLICT DO NOTHING
    rows.push({
      ...compactionRow(compaction),
      id: String(rows.length + 1),
      sources,
      created_at: new Date(0),
    } as unknown as CompactionRow);
  }
  for (const { id, compaction, sources } of writes.updates) {
    const at = rows.findIndex((r) => r.id === id);
    rows[at] = { ...rows[at]!, ...compactionRow(compaction), sources } as CompactionRow;
  }
}

const S = 1_000_000_000n;
const nsAt = (ms: number) => String(T0 + (BigInt(ms) * S) / 1000n);

/**
 * One `/compact` (or an auto compaction) as Claude Code's log event, the hook's span and the
 * transcript's boundary report it: within seconds of each other, each with what it knows (the
 * transcript's history sizes, the event's tokens after, the span's trace).
 */
const oneCompaction = (n: number) =>
  fc
    .record({
      trigger: fc.constantFrom('manual' as const, 'auto' as const),
      offsets: fc.array(fc.integer({ min: 0, max: 20_000 }), { minLength: 3, maxLength: 3 }),
      tokens: fc.array(fc.option(fc.nat(200_000), { nil: null }), {
        minLength: 6,
        maxLength: 6,
      }),
      with: fc.subarray(['claude_code_event', 'span', 'transcript_boundary'] as const, {
        minLength: 1,
      }),
    })
    .map(({ trigger, offsets, tokens, with: evidences }) =>
      evidences.map((evidence, j): Compaction => {
        const e = ['claude_code_event', 'span', 'transcript_boundary'].indexOf(evidence);
        return {
          workspaceId: 'ws',
          conversationId: 'session',
          streamKey: 'session|main',
          runId: 'session',
          traceId: evidence === 'span' ? 'trace' : null,
          spanId: evidence === 'span' ? `hook-${n}` : null,
          // compactions minutes apart: each of its own
          atNs: nsAt(n * 600_000 + offsets[e]!),
          evidence,
          kind: 'summarize',
          trigger,
          tokensBefore: tokens[e]!,
          tokensAfter: tokens[e + 3]!,
          messagesKept: evidence === 'transcript_boundary' ? 3 + n : null,
          summarySize: evidence === 'claude_code_event' ? null : 500 + j,
          summary: null,
          sourceKey: `${evidence}-${n}`,
        };
      }),
    );

describe('one compaction, one row, in any order', () => {
  const compactions = fc
    .array(fc.nat(5), { minLength: 1, maxLength: 3 })
    .chain((ns) => fc.tuple(...[...new Set(ns)].map((n) => oneCompaction(n))))
    .map((all) => all.flat());

  it('every arrangement of the sources ends in the same rows, one per compaction', () => {
    fc.assert(
      fc.property(
        compactions.chain((cs) =>
          fc.tuple(
            fc.constant(cs),
            fc.array(fc.nat(cs.length - 1), { minLength: cs.length, maxLength: cs.length + 2 }),
            fc.shuffledSubarray(cs, { minLength: cs.length, maxLength: cs.length }),
            fc.nat(3),
          ),
        ),
        ([cs, order, shuffled, split]) => {
          // one batch per source in evidence order, vs. the sources shuffled, in up to 4
          // batches, some sent twice
          const a: CompactionRows = [];
          for (const evidence of ['claude_code_event', 'span', 'transcript_boundary'])
            insertCompactions(
              a,
              cs.filter((c) => c.evidence === evidence),
            );
          const b: CompactionRows = [];
          const cut = Math.min(split, shuffled.length);
          insertCompactions(b, shuffled.slice(0, cut));
          insertCompactions(b, shuffled.slice(cut));
          for (const i of order) insertCompactions(b, [cs[i]!]);
          const said = (rows: CompactionRows) =>
            rows
              .map((r) => canonicalJson({ ...r, id: null, created_at: null }))
              .sort((x, y) => (x < y ? -1 : 1));
          expect(said(b)).toEqual(said(a));
          expect(a).toHaveLength(new Set(cs.map((c) => c.sourceKey.split('-')[1])).size);
        },
      ),
      { numRuns: 500 },
    );
  });
});
