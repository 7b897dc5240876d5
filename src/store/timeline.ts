/**
 * The rows of a conversation's timeline: LLM calls in `(start_ns, span_id)` order and the
 * compactions among them, read page by page after a position with indexed range queries
 * (llm_calls_conversation_idx, compactions_conversation_idx), so that reading the next calls
 * of a conversation costs the same at call 10,000 as at call 10. The order the detectors read
 * them in is built by `buildTimeline` (src/detectors/timeline.ts), not here.
 *
 * Paging rules (the evaluator's position depends on them):
 * - calls are paged by `(start_ns, span_id)` as PostgreSQL orders them;
 * - a page ends with a call. Compactions after a page's last call are not part of it: they
 *   are read with the next call, so a position `(ns, spanId)` always means "every call up to
 *   it and every compaction at or before `ns`".
 */
import { sql, type Selectable } from 'kysely';
import type {
  Compaction,
  CompactionEvidence,
  FinishClass,
  InputParts,
  LlmCall,
  UsageRule,
  WindowSource,
} from '../model/calls.ts';
import { countOf, int4, int8Count } from './columns.ts';
import type { Db } from './db.ts';
import { PREPARED } from './prepared.ts';
import type { CompactionsTable, LlmCallsTable } from './schema.ts';

/** A point in a conversation's call order: the start and span id of a call. */
export interface TimelinePosition {
  /** Unix nanoseconds, decimal string. */
  ns: string;
  spanId: string;
}

/**
 * The range of a conversation's call starts (Unix ns, decimal strings) as its row records it
 * (`conversations.calls_from_ns` and `calls_to_ns`, migration 0190): every stored call of the
 * conversation starts within it. `fromNs` after `toNs`: the conversation has no call. Reads
 * bounded by it scan only the daily partitions of `llm_calls` it covers.
 */
export interface CallStarts {
  fromNs: string;
  toNs: string;
}

/** The int8 bounds: reads of a conversation whose call starts are unknown, an empty range. */
export const MIN_NS = '-9223372036854775808';
export const MAX_NS = '9223372036854775807';

/** The starts a read after `after` needs, within `within` (unknown: every start after `after`). */
function startsToRead(
  after: TimelinePosition | null,
  within: CallStarts | null | undefined,
): { lo: string; hi: string } {
  const from = within?.fromNs ?? MIN_NS;
  const lo = after !== null && BigInt(after.ns) > BigInt(from) ? after.ns : from;
  return { lo, hi: within?.toNs ?? MAX_NS };
}

export interface TimelinePage {
  /** The page's calls, by `(startNs, spanId)`. */
  calls: LlmCall[];
  /** The compactions after the previous page's last call, up to this page's last call. */
  compactions: Compaction[];
  /** The position of the page's last call; null when the page is empty. */
  last: TimelinePosition | null;
}

/**
 * The `llm_calls` columns a call's model is read from ({@link toLlmCall}): every column but
 * the captured messages (`input_messages`, kilobytes a call when content is captured), which
 * only What was lost reads. The evaluator's pages read these.
 */
export const CALL_COLUMNS = [
  'workspace_id',
  'trace_id',
  'span_id',
  'parent_span_id',
  'conversation_id',
  'conversation_synthetic',
  'agent_id',
  'stream_key',
  'run_id',
  'side_call',
  'request_id',
  'start_ns',
  'end_ns',
  'producer',
  'provider',
  'request_model',
  'response_model',
  'input_tokens_raw',
  'cache_read_tokens',
  'cache_write_tokens',
  'output_tokens',
  'context_tokens',
  'usage_rule',
  'context_window',
  'window_source',
  'agent_version',
  'finish_reason_raw',
  'finish_class',
  'output_tool_call',
  'output_tool_name',
  'max_output_tokens',
  'parts',
  'compacted',
  'cost_usd',
] as const satisfies ReadonlyArray<keyof LlmCallsTable>;

/** An `llm_calls` row as {@link CALL_COLUMNS} reads it. */
export type CallRow = Pick<Selectable<LlmCallsTable>, (typeof CALL_COLUMNS)[number]>;

/** Maps an `llm_calls` row to the model. */
export function toLlmCall(row: CallRow): LlmCall {
  return {
    workspaceId: row.workspace_id,
    traceId: row.trace_id,
    spanId: row.span_id,
    parentSpanId: row.parent_span_id,
    conversationId: row.conversation_id,
    conversationSynthetic: row.conversation_synthetic,
    agentId: row.agent_id,
    streamKey: row.stream_key,
    runId: row.run_id,
    sideCall: row.side_call,
    requestId: row.request_id,
    startNs: String(row.start_ns),
    endNs: String(row.end_ns),
    producer: row.producer,
    provider: row.provider,
    requestModel: row.request_model,
    responseModel: row.response_model,
    inputTokensRaw: countOf(row.input_tokens_raw),
    cacheReadTokens: countOf(row.cache_read_tokens),
    cacheWriteTokens: countOf(row.cache_write_tokens),
    outputTokens: countOf(row.output_tokens),
    contextTokens: countOf(row.context_tokens),
    usageRule: row.usage_rule as UsageRule | null,
    contextWindow: row.context_window,
    windowSource: row.window_source as WindowSource | null,
    agentVersion: row.agent_version ?? null,
    finishReasonRaw: row.finish_reason_raw,
    finishClass: row.finish_class as FinishClass | null,
    outputToolCall: row.output_tool_call,
    outputToolName: row.output_tool_name,
    maxOutputTokens: countOf(row.max_output_tokens),
    parts: (row.parts ?? null) as InputParts | null,
    compacted: row.compacted,
    // only when reported: a call without one reads back as it was written
    ...(row.cost_usd === null || row.cost_usd === undefined
      ? {}
      : { costUsd: Number(row.cost_usd) }),
  };
}

/** An `llm_calls` row as {@link llmCallRow} writes it. */
export type WrittenCallRow = ReturnType<typeof llmCallRow>;

/**
 * A call as ingest wrote it: its row, and the parts its `parts` JSON was made from (left as they
 * were written: the memory of new calls copies them when the transaction writes its marks).
 */
export interface WrittenCall {
  row: WrittenCallRow;
  parts: InputParts | null;
}

/**
 * A call as {@link toLlmCall} reads back the row {@link llmCallRow} wrote: the captured
 * messages left out (not a column the evaluator reads), the counts as their columns keep them,
 * and the parts as jsonb gives them back (what JSON keeps of them, objects' keys in jsonb's order:
 * shorter keys first, then by their bytes), since code that walks its keys sees that order in
 * what it reads. What ingest hands the evaluator from memory (./call-memo.ts) must be exactly
 * what the evaluator would read.
 */
export function readBack({ row, parts }: WrittenCall): LlmCall {
  return toLlmCall({
    ...row,
    start_ns: canonicalInt(row.start_ns),
    end_ns: canonicalInt(row.end_ns),
    parts: row.parts === null ? null : jsonbCopy(parts),
  } as unknown as CallRow);
}

/** A decimal integer as int8 prints it (no leading zeros, no plus sign). */
const canonicalInt = (text: string): string =>
  /^(0|-?[1-9][0-9]*)$/.test(text) ? text : String(BigInt(text));

/** Whether jsonb orders key `a` after key `b`: by length in bytes, then by bytes. */
function jsonbKeyOrder(a: string, b: string): number {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length - bb.length || Buffer.compare(ab, bb);
}

/** jsonbKeyOrder for ASCII keys (a character is a byte): no buffers. */
const asciiKeyOrder = (a: string, b: string): number =>
  a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);

const ASCII = /^[\x00-\x7f]*$/;

/**
 * A value as `JSON.parse(jsonb text of JSON.stringify(value))` gives it back, without the text:
 * what JSON drops dropped (undefined, functions, symbols: an array's become null), numbers
 * that are not finite null, objects' keys in jsonb's order.
 */
function jsonbCopy(value: unknown): unknown {
  if (value === null) return null;
  switch (typeof value) {
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'string':
    case 'boolean':
      return value;
    case 'object':
      break;
    default:
      return undefined;
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return jsonbCopy(JSON.parse(JSON.stringify(value)));
  if (Array.isArray(value))
    return value.map((item: unknown) => {
      const copy = jsonbCopy(item);
      return copy === undefined ? null : copy;
    });
  const source = value as Record<string, unknown>;
  const keys = Object.keys(source);
  keys.sort(keys.every((key) => ASCII.test(key)) ? asciiKeyOrder : jsonbKeyOrder);
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const copy = jsonbCopy(source[key]);
    if (copy === undefined) continue;
    if (key !== '__proto__') out[key] = copy;
    // an own property even for `__proto__`, as JSON.parse makes it
    else
      Object.defineProperty(out, key, {
        value: copy,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return out;
}

/** Maps a `compactions` row to the model. */
export function toCompaction(row: Selectable<CompactionsTable>): Compaction {
  return {
    workspaceId: row.workspace_id,
    conversationId: row.conversation_id,
    streamKey: row.stream_key,
    runId: row.run_id,
    traceId: row.trace_id,
    spanId: row.span_id,
    atNs: String(row.at_ns),
    evidence: row.evidence as CompactionEvidence,
    kind: row.kind as Compaction['kind'],
    trigger: row.trigger as Compaction['trigger'],
    tokensBefore: countOf(row.tokens_before),
    tokensAfter: countOf(row.tokens_after),
    messagesKept: row.messages_kept,
    summarySize: row.summary_size,
    summary: row.summary,
    sourceKey: row.source_key,
  };
}

/** The `llm_calls` row of a call, for inserts (ingest, tests, benchmarks). */
export function llmCallRow(call: LlmCall) {
  return {
    workspace_id: call.workspaceId,
    trace_id: call.traceId,
    span_id: call.spanId,
    parent_span_id: call.parentSpanId,
    conversation_id: call.conversationId,
    conversation_synthetic: call.conversationSynthetic,
    agent_id: call.agentId,
    stream_key: call.streamKey,
    run_id: call.runId,
    side_call: call.sideCall,
    request_id: call.requestId,
    start_ns: call.startNs,
    end_ns: call.endNs,
    producer: call.producer,
    provider: call.provider,
    request_model: call.requestModel,
    response_model: call.responseModel,
    input_tokens_raw: int8Count(call.inputTokensRaw),
    cache_read_tokens: int8Count(call.cacheReadTokens),
    cache_write_tokens: int8Count(call.cacheWriteTokens),
    output_tokens: int8Count(call.outputTokens),
    context_tokens: int8Count(call.contextTokens),
    usage_rule: call.usageRule,
    context_window: int4(call.contextWindow),
    window_source: call.windowSource,
    agent_version: call.agentVersion,
    finish_reason_raw: call.finishReasonRaw,
    finish_class: call.finishClass,
    output_tool_call: call.outputToolCall,
    output_tool_name: call.outputToolName,
    max_output_tokens: int8Count(call.maxOutputTokens),
    parts: call.parts === null ? null : JSON.stringify(call.parts),
    input_messages: call.inputMessages ? JSON.stringify(call.inputMessages) : null,
    compacted: call.compacted,
    cost_usd: call.costUsd ?? null,
  };
}

/** The `compactions` row of a compaction, for inserts (ingest, tests, benchmarks). */
export function compactionRow(compaction: Compaction) {
  return {
    workspace_id: compaction.workspaceId,
    source_key: compaction.sourceKey,
    conversation_id: compaction.conversationId,
    stream_key: compaction.streamKey,
    run_id: compaction.runId,
    trace_id: compaction.traceId,
    span_id: compaction.spanId,
    at_ns: compaction.atNs,
    evidence: compaction.evidence,
    kind: compaction.kind,
    trigger: compaction.trigger,
    tokens_before: int8Count(compaction.tokensBefore),
    tokens_after: int8Count(compaction.tokensAfter),
    messages_kept: int4(compaction.messagesKept),
    summary_size: int4(compaction.summarySize),
    summary: compaction.summary,
  };
}

/**
 * Reads up to `limit` calls of a conversation after `after` (all from the start when null),
 * with the compactions that precede them and follow `after`. `within`: the range of the
 * conversation's call starts, when known (only the partitions it covers are read).
 */
export async function loadTimelinePage(
  db: Db,
  key: { workspaceId: string; conversationId: string },
  after: TimelinePosition | null,
  limit: number,
  within?: CallStarts | null,
): Promise<TimelinePage> {
  let callsQuery = db
    .selectFrom('llm_calls')
    .select(CALL_COLUMNS)
    .where('workspace_id', '=', key.workspaceId)
    .where('conversation_id', '=', key.conversationId);
  if (within) {
    const { lo, hi } = startsToRead(after, within);
    callsQuery = callsQuery.where('start_ns', '>=', lo).where('start_ns', '<=', hi);
  }
  if (after) {
    callsQuery = callsQuery.where((eb) =>
      eb(eb.refTuple('start_ns', 'span_id'), '>', eb.tuple(after.ns, after.spanId)),
    );
  }
  const callRows = await callsQuery
    .orderBy('start_ns')
    .orderBy('span_id')
    .limit(limit)
    .modifyEnd(PREPARED)
    .execute();
  const lastRow = callRows.at(-1);
  if (!lastRow) return { calls: [], compactions: [], last: null };
  const last: TimelinePosition = { ns: String(lastRow.start_ns), spanId: lastRow.span_id };

  let compactionsQuery = db
    .selectFrom('compactions')
    .selectAll()
    .where('workspace_id', '=', key.workspaceId)
    .where('conversation_id', '=', key.conversationId)
    .where('at_ns', '<=', last.ns);
  if (after) compactionsQuery = compactionsQuery.where('at_ns', '>', after.ns);
  const compactionRows = await compactionsQuery
    .orderBy('at_ns')
    .orderBy('id')
    .modifyEnd(PREPARED)
    .execute();

  return {
    calls: callRows.map(toLlmCall),
    compactions: compactionRows.map(toCompaction),
    last,
  };
}

/** The first timeline page of one conversation of a batch, read with the others. */
export interface PrefetchedPage {
  /** The position it was read after (null: from the start). */
  after: TimelinePosition | null;
  /** Most calls it was read with. */
  limit: number;
  /** Up to `limit` calls after it, in order. */
  calls: LlmCall[];
  /** Every compaction after `after`, in order (cut to a page's last call when used). */
  compactions: Compaction[];
}

/**
 * Reads the first page of several conversations at once (an evaluator's batch): two queries
 * for the batch instead of two per conversation. Each conversation's calls come from the same
 * indexed range read as `loadTimelinePage` (a LATERAL subquery per conversation), within its
 * call starts when known; the batch's whole range is also given as constants, so the plan
 * holds only the partitions it covers.
 */
export async function prefetchTimelinePages(
  db: Db,
  wanted: ReadonlyArray<{
    workspaceId: string;
    conversationId: string;
    after: TimelinePosition | null;
    within?: CallStarts | null | undefined;
  }>,
  limit: number,
): Promise<PrefetchedPage[]> {
  if (wanted.length === 0) return [];
  const workspaces = wanted.map((w) => w.workspaceId);
  const conversations = wanted.map((w) => w.conversationId);
  // No position: before every call (start_ns is never negative; '' sorts first).
  const afterNs = wanted.map((w) => w.after?.ns ?? '-1');
  const afterSpans = wanted.map((w) => w.after?.spanId ?? '');
  const starts = wanted.map((w) => startsToRead(w.after, w.within));
  let batchLo = BigInt(MAX_NS);
  let batchHi = BigInt(MIN_NS);
  for (const { lo, hi } of starts) {
    if (BigInt(lo) < batchLo) batchLo = BigInt(lo);
    if (BigInt(hi) > batchHi) batchHi = BigInt(hi);
  }
  const wantedRows = sql`unnest(${workspaces}::text[], ${conversations}::text[], ${afterNs}::int8[],
    ${afterSpans}::text[], ${starts.map((s) => s.lo)}::int8[], ${starts.map((s) => s.hi)}::int8[])
    WITH ORDINALITY AS w(workspace_id, conversation_id, after_ns, after_span, lo_ns, hi_ns, n)`;
  const callRows = await sql<CallRow & { wanted_n: string }>`
    SELECT w.n AS wanted_n, c.* FROM ${wantedRows}
    CROSS JOIN LATERAL (
      SELECT ${sql.join(CALL_COLUMNS.map((column) => sql.ref(`l.${column}`)))} FROM llm_calls l
       WHERE l.workspace_id = w.workspace_id AND l.conversation_id = w.conversation_id
         AND (l.start_ns, l.span_id) > (w.after_ns, w.after_span)
         AND l.start_ns BETWEEN w.lo_ns AND w.hi_ns
         AND l.start_ns BETWEEN ${String(batchLo)}::int8 AND ${String(batchHi)}::int8
       ORDER BY l.start_ns, l.span_id
       LIMIT ${limit}) c
    ORDER BY w.n, c.start_ns, c.span_id ${PREPARED}`.execute(db);
  const compactionRows = await sql<Selectable<CompactionsTable> & { wanted_n: string }>`
    SELECT w.n AS wanted_n, c.* FROM ${wantedRows}
    JOIN compactions c ON c.workspace_id = w.workspace_id AND c.conversation_id = w.conversation_id
     AND c.at_ns > w.after_ns
    ORDER BY w.n, c.at_ns, c.id ${PREPARED}`.execute(db);
  const pages: PrefetchedPage[] = wanted.map((w) => ({
    after: w.after,
    limit,
    calls: [],
    compactions: [],
  }));
  for (const row of callRows.rows) pages[Number(row.wanted_n) - 1]!.calls.push(toLlmCall(row));
  for (const row of compactionRows.rows)
    pages[Number(row.wanted_n) - 1]!.compactions.push(toCompaction(row));
  return pages;
}

/**
 * The page `loadTimelinePage(db, key, prefetched.after, limit)` would read, cut from a
 * prefetched one; undefined when the prefetch cannot tell (it held fewer calls than asked
 * only because of its own limit).
 */
export function pageOfPrefetched(
  prefetched: PrefetchedPage,
  limit: number,
): TimelinePage | undefined {
  if (prefetched.calls.length < limit && prefetched.calls.length === prefetched.limit)
    return undefined;
  const calls = prefetched.calls.slice(0, limit);
  const lastCall = calls.at(-1);
  if (!lastCall) return { calls: [], compactions: [], last: null };
  const last: TimelinePosition = { ns: lastCall.startNs, spanId: lastCall.spanId };
  const lastNs = BigInt(last.ns);
  return {
    calls,
    compactions: prefetched.compactions.filter((c) => BigInt(c.atNs) <= lastNs),
    last,
  };
}
