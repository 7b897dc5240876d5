/**
 * Writes one normalized ingest batch. The caller (the receiver) opens the transaction and
 * answers 200 only after it commits. Spans, calls and tool results go through staging (one
 * binary COPY and one INSERT … SELECT each, src/store/staging.ts); every insert is idempotent
 * on the table's natural key, so exporter retries never duplicate rows; touched conversations
 * are marked dirty for the evaluator.
 */
import { createHash } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import type { CallContent, Compaction, LlmCall, ToolResult } from '../model/calls.ts';
import type { LogRecord, Span } from '../model/telemetry.ts';
import { int4 } from './columns.ts';
import type { IngestMark } from './conversations.ts';
import type { Db } from './db.ts';
import { PREPARED } from './prepared.ts';
import type { LogRecordsTable } from './schema.ts';
import { insertStaged, type IngestTx } from './staging.ts';
import { compactionRow, llmCallRow } from './timeline.ts';

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

const SPAN_COLUMNS = [
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
    spans.map((span) => ({
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
    })),
    SPAN_KEY,
  );
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

const CALL_COLUMNS = [
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
  'finish_reason_raw',
  'finish_class',
  'output_tool_call',
  'output_tool_name',
  'max_output_tokens',
  'parts',
  'compacted',
];

/** What an insert added: the conversation and start of each new call or compaction, for the dirty marks. */
type Added = { conversation_id: string; at_ns: string; producer?: string };

/** How calls of several producers that describe one request are stored (decided by the receiver). */
export interface CallPrecedence {
  /** Producers whose calls come from log events and yield to a span of the same request id. */
  logProducers: readonly string[];
  /** Quiet time (ms) before evaluation for the conversations of a producer; 0 when absent. */
  settleMs: (producer: string) => number;
}

const toMarks = (
  added: readonly Added[],
  calls: boolean,
  settleMs: (producer: string) => number = () => 0,
): IngestMark[] =>
  added.map((row) => ({
    conversationId: row.conversation_id,
    fromNs: String(row.at_ns),
    calls: calls ? 1 : 0,
    settleMs: row.producer === undefined ? 0 : settleMs(row.producer),
  }));

/**
 * Inserts calls and returns marks for the new ones (re-sent calls are not new). A
 * span-derived call replaces a log-derived call of the same request id (Claude Code exports
 * both); a log-derived call is skipped when its request already has one.
 */
export async function insertCalls(
  tx: IngestTx,
  calls: readonly LlmCall[],
  precedence: CallPrecedence,
): Promise<IngestMark[]> {
  const { db } = tx;
  const { logProducers } = precedence;
  if (calls.length === 0) return [];
  const workspaceId = calls[0]!.workspaceId;
  const fromLogs = calls.filter((call) => logProducers.includes(call.producer));
  let fromSpans = calls.filter((call) => !logProducers.includes(call.producer));
  const spanRequestIds = fromSpans.flatMap((call) => (call.requestId ? [call.requestId] : []));
  if (spanRequestIds.length > 0) {
    const replaced = await db
      .deleteFrom('llm_calls')
      .where('workspace_id', '=', workspaceId)
      .where('producer', 'in', logProducers)
      .where('request_id', 'in', spanRequestIds)
      .returning(['request_id', 'side_call'])
      .execute();
    // the log event said it was a side call (Claude Code `query_source`); the span may not
    const sideCalls = new Map(replaced.map((row) => [row.request_id, row.side_call]));
    fromSpans = fromSpans.map((call) => {
      const side = call.requestId === null ? null : (sideCalls.get(call.requestId) ?? null);
      return call.sideCall === null && side !== null ? { ...call, sideCall: side } : call;
    });
  }
  let keptLogCalls = fromLogs;
  const logRequestIds = fromLogs.flatMap((call) => (call.requestId ? [call.requestId] : []));
  if (logRequestIds.length > 0) {
    const existing = await db
      .selectFrom('llm_calls')
      .select('request_id')
      .where('workspace_id', '=', workspaceId)
      .where('request_id', 'in', logRequestIds)
      .where('producer', 'not in', logProducers)
      .execute();
    const taken = new Set([...existing.map((row) => row.request_id), ...spanRequestIds]);
    keptLogCalls = fromLogs.filter((call) => !call.requestId || !taken.has(call.requestId));
  }
  const added = await insertStaged<Added>(
    tx,
    'llm_calls',
    CALL_COLUMNS,
    [...fromSpans, ...keptLogCalls].map(llmCallRow),
    SPAN_KEY,
    {
      sql: 'conversation_id, start_ns AS at_ns, producer',
      fromRow: (row) => ({
        conversation_id: row.conversation_id as string,
        at_ns: String(row.start_ns),
        producer: row.producer as string,
      }),
    },
  );
  return toMarks(added, true, precedence.settleMs);
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

/** Inserts compactions and returns marks for the new ones. */
export async function insertCompactions(
  db: Db,
  compactions: readonly Compaction[],
): Promise<IngestMark[]> {
  const marks: IngestMark[] = [];
  for (const chunk of chunks(compactions)) {
    const added = await db
      .insertInto('compactions')
      .values(chunk.map(compactionRow))
      .onConflict((oc) => oc.columns(['workspace_id', 'source_key']).doNothing())
      .returning(['conversation_id', 'at_ns'])
      .execute();
    marks.push(...toMarks(added, false));
  }
  return marks;
}

/**
 * Marks calls of the given requests as side calls (Claude Code `query_source` from log
 * events) and returns marks for their conversations: an already evaluated call that turns
 * out to be a side call makes the evaluator replay from it.
 */
export async function markSideCalls(
  db: Db,
  workspaceId: string,
  sideCalls: ReadonlyArray<{ requestId: string; reason: string }>,
): Promise<IngestMark[]> {
  const marks: IngestMark[] = [];
  for (const { requestId, reason } of sideCalls) {
    const changed = await db
      .updateTable('llm_calls')
      .set({ side_call: reason })
      .where('workspace_id', '=', workspaceId)
      .where('request_id', '=', requestId)
      .where('side_call', 'is', null)
      .returning(['conversation_id', 'start_ns as at_ns'])
      .execute();
    marks.push(...toMarks(changed, false));
  }
  return marks;
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
    marks.push(...toMarks(changed, false));
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
