/**
 * Writes one normalized ingest batch. The caller (the receiver) opens the transaction and
 * answers 200 only after it commits. Spans, calls and tool results go through staging (one
 * binary COPY and one INSERT … SELECT each, src/store/staging.ts); every insert is idempotent
 * on the table's natural key, so exporter retries never duplicate rows; touched conversations
 * are marked dirty for the evaluator. SQL and row mapping only: which stored rows a call or a
 * compaction merges with, and what the merged row says, is decided by the receiver
 * (src/receiver/merge-rules.ts), which runs these reads and writes in order
 * (src/receiver/merge-writes.ts).
 */
import { createHash } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import type { CallContent, Compaction, LlmCall, ToolResult } from '../model/calls.ts';
import type { LogRecord, Span } from '../model/telemetry.ts';
import { int4 } from './columns.ts';
import type { IngestMark } from './conversations.ts';
import type { Db } from './db.ts';
import { PREPARED } from './prepared.ts';
import type { CompactionsTable, LlmCallsTable, LogRecordsTable } from './schema.ts';
import { insertStaged, type IngestTx } from './staging.ts';
import {
  CALL_COLUMNS as CALL_MODEL_COLUMNS,
  compactionRow,
  llmCallRow,
  toLlmCall,
} from './timeline.ts';

/** Rows per INSERT statement (keeps bind parameters far below Postgres' 65,535). */
const CHUNK = 500;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

export interface StoredSpan extends Span {
  role: string | null;
}

/** The columns of a raw `spans` row, in the order {@link spanRow} gives them. */
export const SPAN_COLUMNS = [
  'workspace_id',
  'trace_id',
  'span_id',
  'parent_span_id',
  'name',
  'kind',
  'start_ns',
  'end_ns',
  'status_code',
  'status_message',
  'scope_name',
  'scope_version',
  'attributes',
  'events',
  'links',
  'resource',
  'role',
];

/** The natural key of the partitioned raw tables: the ids and the row's time (its partition). */
const SPAN_KEY = 'workspace_id, trace_id, span_id, start_ns';

export async function insertSpans(
  tx: IngestTx,
  workspaceId: string,
  spans: readonly StoredSpan[],
): Promise<void> {
  await insertStaged(
    tx,
    'spans',
    SPAN_COLUMNS,
    spans.map((span) => spanRow(workspaceId, span)),
    SPAN_KEY,
  );
}

/** The raw `spans` row of a stored span (jsonb columns as values, encoded by the COPY). */
export function spanRow(workspaceId: string, span: StoredSpan): Record<string, unknown> {
  return {
    workspace_id: workspaceId,
    trace_id: span.traceId,
    span_id: span.spanId,
    parent_span_id: span.parentSpanId,
    name: span.name,
    kind: span.kind,
    start_ns: span.startTimeUnixNano,
    end_ns: span.endTimeUnixNano,
    status_code: span.statusCode,
    status_message: span.statusMessage,
    scope_name: span.scope.name,
    scope_version: span.scope.version,
    attributes: span.attributes,
    events: span.events,
    links: span.links,
    resource: span.resource,
    role: span.role,
  };
}

/** A stable key for a log record: exporters re-send identical records on retry. */
export function logDedupeKey(log: LogRecord): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        log.timeUnixNano,
        log.eventName,
        log.traceId,
        log.spanId,
        log.attributes,
        log.body,
        log.resource,
      ]),
    )
    .digest('base64url')
    .slice(0, 32);
}

export async function insertLogRecords(
  db: Db,
  workspaceId: string,
  logs: readonly LogRecord[],
): Promise<void> {
  for (const chunk of chunks(logs)) {
    await db
      .insertInto('log_records')
      .values(
        chunk.map((log) => ({
          workspace_id: workspaceId,
          dedupe_key: logDedupeKey(log),
          time_ns: log.timeUnixNano,
          observed_ns: log.observedTimeUnixNano,
          event_name: log.eventName,
          severity_number: log.severityNumber,
          severity_text: log.severityText,
          trace_id: log.traceId,
          span_id: log.spanId,
          body: log.body === null ? null : JSON.stringify(log.body),
          attributes: JSON.stringify(log.attributes),
          resource: JSON.stringify(log.resource),
          scope_name: log.scope.name,
        })),
      )
      .onConflict((oc) => oc.columns(['workspace_id', 'dedupe_key', 'time_ns']).doNothing())
      .execute();
  }
}

/** The columns a call's row is written with: what its model reads, and its captured messages. */
const CALL_COLUMNS = [...CALL_MODEL_COLUMNS, 'input_messages'];

/** The columns of a call that replaces rows of the same request: with what an import said. */
const MERGED_CALL_COLUMNS = [...CALL_COLUMNS, 'imported'];

/** What an insert added: the conversation and start of each new call or compaction, for the dirty marks. */
type Added = { conversation_id: string; at_ns: string; producer?: string };

/** The marks of added (or changed) rows: `calls` counts them as new calls. */
export const marksOf = (
  added: readonly Added[],
  calls: boolean,
  settleMs: (producer: string) => number = () => 0,
): IngestMark[] =>
  added.map((row) => ({
    conversationId: row.conversation_id,
    fromNs: String(row.at_ns),
    calls: calls ? 1 : 0,
    ...(calls ? { callStarts: { fromNs: String(row.at_ns), toNs: String(row.at_ns) } } : {}),
    settleMs: row.producer === undefined ? 0 : settleMs(row.producer),
  }));

/** Sources of one request lie within this of each other (ns): bounds the lookup to a few partitions. */
const SAME_REQUEST_NS = 86_400_000_000_000n;

/** A stored `llm_calls` row. */
export type CallRow = Selectable<LlmCallsTable>;

/** A stored `compactions` row. */
export type CompactionRow = Selectable<CompactionsTable>;

/**
 * The rows of the requests of `calls` (one query; sources of a request lie within a day). How
 * they merge with the calls is the receiver's (src/receiver/merge-rules.ts).
 */
export async function rowsOfRequests(
  db: Db,
  workspaceId: string,
  calls: readonly LlmCall[],
): Promise<CallRow[]> {
  let lo = BigInt(calls[0]!.startNs);
  let hi = lo;
  for (const call of calls) {
    const ns = BigInt(call.startNs);
    if (ns < lo) lo = ns;
    if (ns > hi) hi = ns;
  }
  const ids = [...new Set(calls.map((call) => call.requestId!))];
  return db
    .selectFrom('llm_calls')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where(sql<boolean>`request_id = ANY(${ids}::text[])`)
    .where('start_ns', '>=', String(lo - SAME_REQUEST_NS))
    .where('start_ns', '<=', String(hi + SAME_REQUEST_NS))
    .execute();
}

/**
 * Inserts calls (re-sent ones are skipped on their key); marks for those really new, with their
 * producer's settle time.
 */
export async function insertNewCalls(
  tx: IngestTx,
  calls: readonly LlmCall[],
  settleMs: (producer: string) => number,
): Promise<IngestMark[]> {
  const rows = calls.map(llmCallRow);
  const added = await insertStaged<Added>(tx, 'llm_calls', CALL_COLUMNS, rows, SPAN_KEY, {
    sql: 'conversation_id, start_ns AS at_ns, producer',
    fromRow: (row) => ({
      conversation_id: row.conversation_id as string,
      at_ns: String(row.start_ns),
      producer: row.producer as string,
    }),
  });
  const marks = marksOf(added, true, settleMs);
  // A straight COPY inserted every row, in order: each mark carries its row, for the evaluator's
  // memory of new calls (./call-memo.ts). Through staging some may have been skipped: none does.
  if (!tx.resent)
    for (const [i, mark] of marks.entries())
      mark.fresh = [{ row: rows[i]!, parts: calls[i]!.parts }];
  return marks;
}

/** Inserts calls that replace stored rows, each with what an import said of it (`imported`). */
export async function insertReplacingCalls(
  tx: IngestTx,
  replacements: ReadonlyArray<{ call: LlmCall; imported: unknown }>,
): Promise<void> {
  await insertStaged(
    tx,
    'llm_calls',
    MERGED_CALL_COLUMNS,
    replacements.map(({ call, imported }) => ({
      ...llmCallRow(call),
      imported: imported === null ? null : JSON.stringify(imported),
    })),
    SPAN_KEY,
  );
}

/** Deletes call rows by their primary key (one statement). */
export async function deleteCalls(
  db: Db,
  workspaceId: string,
  rows: ReadonlyArray<Pick<CallRow, 'trace_id' | 'span_id' | 'start_ns'>>,
): Promise<void> {
  if (rows.length === 0) return;
  await sql`DELETE FROM llm_calls l
    USING unnest(${rows.map((r) => r.trace_id)}::text[], ${rows.map((r) => r.span_id)}::text[],
                 ${rows.map((r) => String(r.start_ns))}::int8[]) AS g(trace_id, span_id, start_ns)
    WHERE l.workspace_id = ${workspaceId} AND l.trace_id = g.trace_id
      AND l.span_id = g.span_id AND l.start_ns = g.start_ns`.execute(db);
}

/** Of `conversationIds`, those holding tool results of one of `sources` (one query). */
export async function conversationsWithResults(
  db: Db,
  workspaceId: string,
  conversationIds: readonly string[],
  sources: readonly string[],
): Promise<Set<string>> {
  if (sources.length === 0 || conversationIds.length === 0) return new Set();
  const rows = await sql<{ conversation_id: string }>`
    SELECT c.id AS conversation_id FROM unnest(${[...new Set(conversationIds)]}::text[]) AS c(id)
     WHERE EXISTS (SELECT 1 FROM tool_results r WHERE r.workspace_id = ${workspaceId}
                     AND r.conversation_id = c.id AND r.source = ANY(${[...sources]}::text[]))`.execute(
    db,
  );
  return new Set(rows.rows.map((row) => row.conversation_id));
}

/**
 * Writes the fields merged into stored rows (one statement): each row's key, its new fields
 * (`call`) and what an import said (`imported`); stored input messages are kept.
 */
export async function updateMergedCalls(
  db: Db,
  workspaceId: string,
  updates: ReadonlyArray<{ row: CallRow; call: LlmCall; imported: unknown }>,
): Promise<void> {
  if (updates.length === 0) return;
  const values = updates.map(({ row, call, imported }) => {
    const r = llmCallRow(call);
    return {
      trace_id: row.trace_id,
      span_id: row.span_id,
      start_ns: String(row.start_ns),
      request_model: r.request_model,
      response_model: r.response_model,
      input_tokens_raw: r.input_tokens_raw,
      cache_read_tokens: r.cache_read_tokens,
      cache_write_tokens: r.cache_write_tokens,
      output_tokens: r.output_tokens,
      context_tokens: r.context_tokens,
      usage_rule: r.usage_rule,
      context_window: r.context_window,
      window_source: r.window_source,
      agent_version: r.agent_version,
      finish_reason_raw: r.finish_reason_raw,
      finish_class: r.finish_class,
      output_tool_call: r.output_tool_call,
      output_tool_name: r.output_tool_name,
      max_output_tokens: r.max_output_tokens,
      parts: call.parts,
      side_call: r.side_call,
      compacted: r.compacted,
      input_messages: r.input_messages,
      imported,
    };
  });
  await sql`
    UPDATE llm_calls l SET
      request_model = v.request_model, response_model = v.response_model,
      input_tokens_raw = v.input_tokens_raw, cache_read_tokens = v.cache_read_tokens,
      cache_write_tokens = v.cache_write_tokens, output_tokens = v.output_tokens,
      context_tokens = v.context_tokens, usage_rule = v.usage_rule,
      context_window = v.context_window, window_source = v.window_source,
      agent_version = v.agent_version, finish_reason_raw = v.finish_reason_raw,
      finish_class = v.finish_class, output_tool_call = v.output_tool_call,
      output_tool_name = v.output_tool_name, max_output_tokens = v.max_output_tokens,
      parts = v.parts, side_call = v.side_call, compacted = v.compacted, imported = v.imported,
      input_messages = coalesce(l.input_messages, v.input_messages)
    FROM jsonb_to_recordset(${JSON.stringify(values)}::jsonb) AS v(
      trace_id text, span_id text, start_ns int8, request_model text, response_model text,
      input_tokens_raw int8, cache_read_tokens int8, cache_write_tokens int8, output_tokens int8,
      context_tokens int8, usage_rule text, context_window int4, window_source text,
      agent_version text, finish_reason_raw text, finish_class text, output_tool_call boolean,
      output_tool_name text, max_output_tokens int8, parts jsonb, side_call text,
      compacted boolean, input_messages text, imported jsonb)
    WHERE l.workspace_id = ${workspaceId} AND l.trace_id = v.trace_id AND l.span_id = v.span_id
      AND l.start_ns = v.start_ns`.execute(db);
}

/** What a finding names of calls: its anchor, its call and its details. */
export type FindingRefs = { anchor: string; trace_id: string; span_id: string; details: unknown };

/** The findings of `conversationIds` whose call or anchor names one of `spanIds`. */
export async function findingsNamingSpans(
  db: Db,
  workspaceId: string,
  conversationIds: readonly string[],
  spanIds: readonly string[],
): Promise<Array<FindingRefs & { id: string; detector: string }>> {
  return db
    .selectFrom('findings')
    .select(['id', 'detector', 'anchor', 'trace_id', 'span_id', 'details'])
    .where('workspace_id', '=', workspaceId)
    .where('conversation_id', 'in', [...conversationIds])
    .where((eb) =>
      eb.or([
        eb('span_id', 'in', [...spanIds]),
        sql<boolean>`anchor LIKE ANY(${spanIds.map((s) => `%${s}%`)}::text[])`,
      ]),
    )
    .execute();
}

/**
 * Moves a finding to a new anchor, call and details, unless another finding of its detector
 * holds that anchor already (then it is left as it is).
 */
export async function moveFinding(
  db: Db,
  workspaceId: string,
  finding: { id: string; detector: string },
  to: { anchor: string; traceId: string; spanId: string; details: unknown },
): Promise<void> {
  await sql`UPDATE findings SET anchor = ${to.anchor}, trace_id = ${to.traceId}, span_id = ${to.spanId},
      details = ${JSON.stringify(to.details)}::jsonb
    WHERE id = ${finding.id} AND NOT EXISTS (
      SELECT 1 FROM findings o WHERE o.workspace_id = ${workspaceId}
         AND o.detector = ${finding.detector} AND o.anchor = ${to.anchor} AND o.id <> ${finding.id})`.execute(
    db,
  );
}

const TOOL_RESULT_COLUMNS = [
  'workspace_id',
  'trace_id',
  'span_id',
  'conversation_id',
  'stream_key',
  'tool_name',
  'tool_call_id',
  'result_size',
  'size_unit',
  'at_ns',
  'source',
];

export async function insertToolResults(
  tx: IngestTx,
  results: readonly ToolResult[],
): Promise<void> {
  await insertStaged(
    tx,
    'tool_results',
    TOOL_RESULT_COLUMNS,
    results.map((result) => ({
      workspace_id: result.workspaceId,
      trace_id: result.traceId,
      span_id: result.spanId,
      conversation_id: result.conversationId,
      stream_key: result.streamKey,
      tool_name: result.toolName,
      tool_call_id: result.toolCallId,
      result_size: int4(result.resultSize),
      size_unit: result.sizeUnit,
      at_ns: result.atNs,
      source: result.source,
    })),
    'workspace_id, trace_id, span_id, at_ns',
  );
}

/** The compactions of `conversationIds` between two times (ns, inclusive). */
export async function compactionsBetween(
  db: Db,
  workspaceId: string,
  conversationIds: readonly string[],
  fromNs: string,
  toNs: string,
): Promise<CompactionRow[]> {
  return db
    .selectFrom('compactions')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('conversation_id', 'in', [...new Set(conversationIds)])
    .where('at_ns', '>=', fromNs)
    .where('at_ns', '<=', toNs)
    .execute();
}

/**
 * Inserts compactions, each with its sources (`compactions.sources`), skipping a source key
 * stored already; marks for the new ones.
 */
export async function insertCompactionRows(
  db: Db,
  rows: ReadonlyArray<{ compaction: Compaction; sources: unknown }>,
): Promise<IngestMark[]> {
  const marks: IngestMark[] = [];
  for (const chunk of chunks(rows)) {
    const added = await db
      .insertInto('compactions')
      .values(
        chunk.map(({ compaction, sources }) => ({
          ...compactionRow(compaction),
          sources: JSON.stringify(sources),
        })),
      )
      .onConflict((oc) => oc.columns(['workspace_id', 'source_key']).doNothing())
      .returning(['conversation_id', 'at_ns'])
      .execute();
    marks.push(...marksOf(added, false));
  }
  return marks;
}

/** Rewrites a stored compaction with its merged fields and sources. */
export async function updateCompactionRow(
  db: Db,
  id: CompactionRow['id'],
  compaction: Compaction,
  sources: unknown,
): Promise<void> {
  const { workspace_id: _w, ...set } = compactionRow(compaction);
  await db
    .updateTable('compactions')
    .set({ ...set, sources: JSON.stringify(sources) })
    .where('id', '=', id)
    .execute();
}

/**
 * Gives the cost a log event reported (Claude Code `cost_usd`) to the stored row of its request
 * when that row has none: a span of the same request id outranks the log event and took the
 * row (src/receiver/merge-rules.ts), but spans carry no cost. Rows with a cost keep it. Nothing the
 * detectors read changes, so no conversation is marked.
 */
export async function fillReportedCosts(
  db: Db,
  workspaceId: string,
  calls: readonly LlmCall[],
): Promise<void> {
  const costed = calls.filter(
    (call): call is LlmCall & { requestId: string; costUsd: number } =>
      call.requestId !== null && typeof call.costUsd === 'number',
  );
  if (costed.length === 0) return;
  await sql`UPDATE llm_calls l SET cost_usd = v.cost_usd
    FROM unnest(${costed.map((c) => c.requestId)}::text[], ${costed.map((c) => c.costUsd)}::float8[])
      AS v(request_id, cost_usd)
    WHERE l.workspace_id = ${workspaceId} AND l.request_id = v.request_id
      AND l.cost_usd IS NULL`.execute(db);
}

/**
 * Marks the calls of a request as side calls (Claude Code `query_source` from log events) where
 * not marked yet; a side call gives up the sizes joined to it from logged results
 * (src/receiver/logged-tool-parts.ts). Returns the rows it changed.
 */
export async function setSideCall(
  db: Db,
  workspaceId: string,
  requestId: string,
  reason: string,
): Promise<Array<{ conversation_id: string; stream_key: string; at_ns: string }>> {
  const changed = await db
    .updateTable('llm_calls')
    .set({
      side_call: reason,
      // sizes joined from logged results: a side call holds none (src/receiver/logged-tool-parts.ts)
      parts: sql<
        string | null
      >`CASE WHEN parts->>'estimatedFrom' = 'bytes' AND parts->>'source' = 'tool_spans' THEN NULL ELSE parts END`,
    })
    .where('workspace_id', '=', workspaceId)
    .where('request_id', '=', requestId)
    .where('side_call', 'is', null)
    .returning(['conversation_id', 'stream_key', 'start_ns as at_ns', 'parts'])
    .execute();
  return changed.map((row) => ({
    conversation_id: row.conversation_id,
    stream_key: row.stream_key,
    at_ns: String(row.at_ns),
  }));
}

/** The first main call with token counts of a stream after `afterNs`, if any. */
export async function nextMainCall(
  db: Db,
  workspaceId: string,
  conversationId: string,
  streamKey: string,
  afterNs: string,
): Promise<LlmCall | undefined> {
  const next = await db
    .selectFrom('llm_calls')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('conversation_id', '=', conversationId)
    .where('stream_key', '=', streamKey)
    .where('side_call', 'is', null)
    .where('context_tokens', 'is not', null)
    .where('start_ns', '>', afterNs)
    .orderBy('start_ns')
    .limit(1)
    .executeTakeFirst();
  return next ? toLlmCall(next) : undefined;
}

/**
 * Applies message content that arrived as log records (OTel GenAI instrumentations log it
 * apart from the span) to the calls of the same trace and span id: input parts, the output's
 * tool call and the finish reason, where the span did not carry them. Returns marks for the
 * calls it changed, whose conversations need evaluating again.
 */
export async function applyCallContent(
  db: Db,
  workspaceId: string,
  contents: readonly CallContent[],
): Promise<IngestMark[]> {
  const marks: IngestMark[] = [];
  for (const content of contents) {
    const changed = await db
      .updateTable('llm_calls')
      .set({
        // Content from the span itself (when it had some) wins over the logs.
        parts: sql<
          string | null
        >`COALESCE(parts, ${content.parts === null ? null : JSON.stringify(content.parts)}::jsonb)`,
        output_tool_call: sql<boolean>`output_tool_call OR ${content.outputToolCall}`,
        output_tool_name: sql<
          string | null
        >`COALESCE(output_tool_name, ${content.outputToolName}::text)`,
        finish_reason_raw: sql<
          string | null
        >`COALESCE(finish_reason_raw, ${content.finishReasonRaw}::text)`,
        finish_class: sql<string | null>`COALESCE(finish_class, ${content.finishClass}::text)`,
      })
      .where('workspace_id', '=', workspaceId)
      .where('trace_id', '=', content.traceId)
      .where('span_id', '=', content.spanId)
      .returning(['conversation_id', 'start_ns as at_ns'])
      .execute();
    marks.push(...marksOf(changed, false));
  }
  return marks;
}

/** The stored log records of the given spans, in time order (content logged before its span). */
export async function loadLogRecordsOfSpans(
  db: Db,
  workspaceId: string,
  calls: ReadonlyArray<{ traceId: string; spanId: string }>,
): Promise<LogRecord[]> {
  if (calls.length === 0) return [];
  const wanted = new Set(calls.map((call) => `${call.traceId}:${call.spanId}`));
  const rows = await db
    .selectFrom('log_records')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where(sql<boolean>`trace_id = ANY(${[...new Set(calls.map((call) => call.traceId))]}::text[])`)
    .where('span_id', 'is not', null)
    .orderBy('time_ns')
    .orderBy('id')
    .modifyEnd(PREPARED)
    .execute();
  return rows.filter((row) => wanted.has(`${row.trace_id}:${row.span_id}`)).map(toLogRecord);
}

function toLogRecord(row: Selectable<LogRecordsTable>): LogRecord {
  return {
    timeUnixNano: String(row.time_ns),
    observedTimeUnixNano: String(row.observed_ns),
    severityNumber: row.severity_number,
    severityText: row.severity_text,
    eventName: row.event_name,
    body: (row.body ?? null) as LogRecord['body'],
    attributes: row.attributes as LogRecord['attributes'],
    traceId: row.trace_id,
    spanId: row.span_id,
    resource: row.resource as LogRecord['resource'],
    scope: { name: row.scope_name, version: '' },
  };
}

/**
 * Serializes the transactions that write evidence of the same calls (a span batch and a log
 * batch of one trace or conversation, sent by two exporters at once): each waits for the other
 * to commit, so the later one sees the earlier one's rows. Transaction-scoped advisory locks,
 * taken in one order so two batches never wait on each other in a cycle.
 */
export async function lockIngestKeys(db: Db, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  const sorted = [...new Set(keys)].sort();
  await sql`
    SELECT pg_advisory_xact_lock(hashtextextended(k, 0))
      FROM unnest(${sorted}::text[]) WITH ORDINALITY AS t(k, n)
     ORDER BY n`.execute(db);
}
