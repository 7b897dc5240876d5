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
import {
  canonicalJson,
  distanceNs,
  fillFromImport,
  importedOf,
  isImportedParts,
  mergeCompaction,
  readImported,
  readSources,
  SAME_COMPACTION_NS,
  sameCompaction,
  sameMergedFields,
  sortSources,
  sourceOf,
  type CompactionSource,
  type ImportedCall,
} from './merge.ts';
import { PREPARED } from './prepared.ts';
import type { CompactionsTable, LlmCallsTable, LogRecordsTable } from './schema.ts';
import { insertStaged, type IngestTx } from './staging.ts';
import { compactionRow, llmCallRow, toCompaction, toLlmCall } from './timeline.ts';

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
  'agent_version',
  'finish_reason_raw',
  'finish_class',
  'output_tool_call',
  'output_tool_name',
  'max_output_tokens',
  'parts',
  'compacted',
  'input_messages',
  'cost_usd',
];

/** The columns of a call that replaces rows of the same request: with what an import said. */
const MERGED_CALL_COLUMNS = [...CALL_COLUMNS, 'imported'];

/** What an insert added: the conversation and start of each new call or compaction, for the dirty marks. */
type Added = { conversation_id: string; at_ns: string; producer?: string };

/** How calls of several producers that describe one request are stored (decided by the receiver). */
export interface CallPrecedence {
  /** Producers whose calls come from log events and yield to a span of the same request id. */
  logProducers: readonly string[];
  /**
   * Producers whose calls come from session-file imports (transcripts): they yield to telemetry
   * (spans, log events) of the same request id and fill what it lacks (src/store/merge.ts).
   */
  importProducers?: readonly string[];
  /**
   * Tool-result sources whose sizes become the parts of calls (Claude Code's logged results):
   * in a conversation that has them, an import's estimated parts are not used.
   */
  partsResultSources?: readonly string[];
  /** Quiet time (ms) before evaluation for the conversations of a producer; 0 when absent. */
  settleMs: (producer: string) => number;
}

/** What `insertCalls` tells the caller beyond the marks. */
export interface CallsOutcome {
  /**
   * Calls whose import-estimated parts were dropped because logged tool results size them
   * now: the caller joins the logged results to them (src/receiver/logged-tool-parts.ts).
   */
  partsDropped: LlmCall[];
  /** Calls whose request had a row of another source already (merged with it, not added). */
  merged: number;
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

/** Sources of one request lie within this of each other (ns): bounds the lookup to a few partitions. */
const SAME_REQUEST_NS = 86_400_000_000_000n;

type CallRow = Selectable<LlmCallsTable>;

const minNs = (a: string, b: string) => (BigInt(a) <= BigInt(b) ? a : b);

/** A call row's identity: its primary key. */
const sameRow = (row: CallRow, call: LlmCall) =>
  row.trace_id === call.traceId &&
  row.span_id === call.spanId &&
  String(row.start_ns) === call.startNs;

/**
 * Inserts calls and returns marks for the new ones (re-sent calls are not new). One LLM call is
 * one row whatever brought it (DESIGN §5, src/store/merge.ts): calls with a request id are
 * looked up by it (one query per batch), and
 * - a better source (span > log event > import) replaces the row of a worse one: the row takes
 *   its identity and fields, keeps the log event's side-call reason and what an import said,
 *   and the findings anchored on the old row follow it (re-anchored, so never made twice);
 * - a worse source merges into the row of a better one: a log event adds nothing (its side
 *   call comes through `markSideCalls`), an import fills what telemetry lacks;
 * - a source of the same rank with another identity is stored beside it, as before.
 * Conversations whose stored rows changed are marked from the earliest start involved, so the
 * evaluator replays them. `outcome` receives what the caller must do next (see CallsOutcome).
 */
export async function insertCalls(
  tx: IngestTx,
  calls: readonly LlmCall[],
  precedence: CallPrecedence,
  outcome?: CallsOutcome,
): Promise<IngestMark[]> {
  const { db } = tx;
  if (calls.length === 0) return [];
  const workspaceId = calls[0]!.workspaceId;
  const imports = precedence.importProducers ?? [];
  const rankOf = (producer: string) =>
    imports.includes(producer) ? 1 : precedence.logProducers.includes(producer) ? 2 : 3;
  const keyed = calls.filter((call) => call.requestId !== null);
  const existing = keyed.length === 0 ? [] : await rowsOfRequests(db, workspaceId, keyed);
  if (existing.length === 0) return insertNewCalls(tx, calls, precedence);

  const byRequest = new Map<string, CallRow[]>();
  for (const row of existing) {
    const list = byRequest.get(row.request_id!) ?? [];
    list.push(row);
    byRequest.set(row.request_id!, list);
  }
  const fresh: LlmCall[] = [];
  const marks: IngestMark[] = [];
  /** Rows replaced by a better source, with the call replacing them and what an import said. */
  const replacing: Array<{ call: LlmCall; rows: CallRow[]; imported: ImportedCall | null }> = [];
  /** Rows a worse source merges into, with the row's new fields. */
  const merging: Array<{
    row: CallRow;
    imported: ImportedCall | null;
    call: (importedParts: boolean) => LlmCall;
  }> = [];
  for (const call of calls) {
    const rows = call.requestId === null ? [] : (byRequest.get(call.requestId) ?? []);
    if (rows.some((row) => sameRow(row, call))) continue; // re-sent
    const rank = rankOf(call.producer);
    const best = bestRow(rows, rankOf);
    if (best === undefined || rankOf(best.producer) === rank) {
      fresh.push(call);
      continue;
    }
    if (outcome) outcome.merged += 1;
    if (rankOf(best.producer) < rank) {
      const worse = rows.filter((row) => rankOf(row.producer) < rank);
      const own = worse.find((row) => imports.includes(row.producer));
      const imported: ImportedCall | null = own
        ? importedOf(toLlmCall(own))
        : (worse.map((row) => readImported(row.imported)).find((x) => x !== null) ?? null);
      // the log event said it was a side call (Claude Code `query_source`); the span may not
      const sideCall =
        call.sideCall ?? worse.find((row) => row.side_call !== null)?.side_call ?? null;
      // the log event said what it cost (Claude Code `cost_usd`); the span does not
      const costUsd = call.costUsd ?? worse.find((row) => row.cost_usd !== null)?.cost_usd ?? null;
      replacing.push({ call: { ...call, sideCall, costUsd }, rows: worse, imported });
      continue;
    }
    const row = best;
    const stored = toLlmCall(row);
    const storedImport = readImported(row.imported);
    if (imports.includes(call.producer)) {
      const imported = importedOf(call);
      if (storedImport !== null && canonicalJson(storedImport) === canonicalJson(imported))
        continue;
      merging.push({ row, imported, call: (parts) => fillFromImport(stored, imported, parts) });
    } else if (isImportedParts(stored.parts, storedImport)) {
      // a log event of a call whose parts an import estimated: logged results size it now
      merging.push({ row, imported: storedImport, call: () => ({ ...stored, parts: null }) });
    }
  }

  // An import's parts count only where telemetry sizes nothing: no logged results, no log event.
  const withImport = [
    ...replacing.filter((r) => r.imported?.parts != null && r.call.parts === null),
    ...merging.filter((m) => m.imported?.parts != null),
  ];
  const logged =
    withImport.length === 0
      ? new Set<string>()
      : await conversationsWithResults(
          db,
          workspaceId,
          [
            ...replacing.map((r) => r.call.conversationId),
            ...merging.map((m) => m.row.conversation_id),
          ],
          precedence.partsResultSources ?? [],
        );
  const importedParts = (conversationId: string, producer: string) =>
    !precedence.logProducers.includes(producer) && !logged.has(conversationId);

  const replacements = replacing.map(({ call, rows, imported }) => ({
    call:
      imported === null
        ? call
        : fillFromImport(
            call,
            imported,
            importedParts(call.conversationId, call.producer) &&
              !rows.some((row) => precedence.logProducers.includes(row.producer)),
          ),
    rows,
    imported,
  }));
  const updates: Array<{ row: CallRow; call: LlmCall; imported: ImportedCall | null }> = [];
  for (const m of merging) {
    const call = m.call(importedParts(m.row.conversation_id, m.row.producer));
    const stored = toLlmCall(m.row);
    const changed = !sameMergedFields(stored, call);
    if (!changed && canonicalJson(readImported(m.row.imported)) === canonicalJson(m.imported))
      continue;
    updates.push({ row: m.row, call, imported: m.imported });
    if (changed)
      marks.push({ conversationId: stored.conversationId, fromNs: stored.startNs, calls: 0 });
    if (stored.parts !== null && call.parts === null) outcome?.partsDropped.push(call);
  }

  const gone = replacements.flatMap((r) => r.rows);
  if (gone.length > 0) {
    await sql`DELETE FROM llm_calls l
      USING unnest(${gone.map((r) => r.trace_id)}::text[], ${gone.map((r) => r.span_id)}::text[],
                   ${gone.map((r) => String(r.start_ns))}::int8[]) AS g(trace_id, span_id, start_ns)
      WHERE l.workspace_id = ${workspaceId} AND l.trace_id = g.trace_id
        AND l.span_id = g.span_id AND l.start_ns = g.start_ns`.execute(db);
  }
  marks.push(...(await insertNewCalls(tx, fresh, precedence)));
  if (replacements.length > 0) {
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
    for (const { call, rows } of replacements) {
      const settleMs = precedence.settleMs(call.producer);
      let fromNs = call.startNs;
      for (const row of rows) {
        fromNs = minNs(fromNs, String(row.start_ns));
        if (row.conversation_id !== call.conversationId)
          marks.push({
            conversationId: row.conversation_id,
            fromNs: String(row.start_ns),
            calls: 0,
          });
      }
      marks.push({ conversationId: call.conversationId, fromNs, calls: 0, settleMs });
    }
    await reanchorFindings(
      db,
      workspaceId,
      replacements.flatMap(({ call, rows }) =>
        rows.map((row) => ({
          conversationId: row.conversation_id,
          from: { traceId: row.trace_id, spanId: row.span_id },
          to: { traceId: call.traceId, spanId: call.spanId },
        })),
      ),
    );
  }
  if (updates.length > 0) await updateMergedCalls(db, workspaceId, updates);
  return marks;
}

/** The rows of the requests of `calls` (one query; sources of a request lie within a day). */
async function rowsOfRequests(
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

/** The row a source of its request merges with: the best-ranked, then the earliest. */
function bestRow(
  rows: readonly CallRow[],
  rankOf: (producer: string) => number,
): CallRow | undefined {
  let best: CallRow | undefined;
  for (const row of rows) {
    if (best === undefined) {
      best = row;
      continue;
    }
    const d = rankOf(row.producer) - rankOf(best.producer);
    const earlier = BigInt(row.start_ns) < BigInt(best.start_ns);
    if (d > 0 || (d === 0 && earlier)) best = row;
  }
  return best;
}

/** Inserts calls no stored row describes; marks for those really new. */
async function insertNewCalls(
  tx: IngestTx,
  calls: readonly LlmCall[],
  precedence: CallPrecedence,
): Promise<IngestMark[]> {
  const added = await insertStaged<Added>(
    tx,
    'llm_calls',
    CALL_COLUMNS,
    calls.map(llmCallRow),
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

/** Of `conversationIds`, those holding tool results of one of `sources` (one query). */
async function conversationsWithResults(
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

/** Writes the fields merged into stored rows (one statement). */
async function updateMergedCalls(
  db: Db,
  workspaceId: string,
  updates: ReadonlyArray<{ row: CallRow; call: LlmCall; imported: ImportedCall | null }>,
): Promise<void> {
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
      parts = v.parts, side_call = v.side_call, compacted = v.compacted, imported = v.imported
    FROM jsonb_to_recordset(${JSON.stringify(values)}::jsonb) AS v(
      trace_id text, span_id text, start_ns int8, request_model text, response_model text,
      input_tokens_raw int8, cache_read_tokens int8, cache_write_tokens int8, output_tokens int8,
      context_tokens int8, usage_rule text, context_window int4, window_source text,
      agent_version text, finish_reason_raw text, finish_class text, output_tool_call boolean,
      output_tool_name text, max_output_tokens int8, parts jsonb, side_call text,
      compacted boolean, imported jsonb)
    WHERE l.workspace_id = ${workspaceId} AND l.trace_id = v.trace_id AND l.span_id = v.span_id
      AND l.start_ns = v.start_ns`.execute(db);
}

/** A call row that another source's row replaced, and the row replacing it. */
interface Reanchor {
  conversationId: string;
  from: { traceId: string; spanId: string };
  to: { traceId: string; spanId: string };
}

/**
 * Moves the findings anchored on replaced call rows to the rows that replaced them: the
 * finding's call, its anchor (anchors name calls by `traceId:spanId`, tool_takeover by the
 * span id of an episode's first call) and the calls its details list. So the evaluator's
 * replay of the merged rows finds the findings it made before, and never makes (or sends) them
 * again. A finding whose new anchor another finding holds already is left as it is.
 */
async function reanchorFindings(
  db: Db,
  workspaceId: string,
  moves: readonly Reanchor[],
): Promise<void> {
  const real = moves.filter(
    (m) => m.from.traceId !== m.to.traceId || m.from.spanId !== m.to.spanId,
  );
  if (real.length === 0) return;
  const olds = [...new Set(real.map((m) => m.from.spanId))];
  const rows = await db
    .selectFrom('findings')
    .select(['id', 'detector', 'anchor', 'trace_id', 'span_id', 'details'])
    .where('workspace_id', '=', workspaceId)
    .where('conversation_id', 'in', [...new Set(real.map((m) => m.conversationId))])
    .where((eb) =>
      eb.or([
        eb('span_id', 'in', olds),
        sql<boolean>`anchor LIKE ANY(${olds.map((s) => `%${s}%`)}::text[])`,
      ]),
    )
    .execute();
  for (const row of rows) {
    let anchor = row.anchor;
    let traceId = row.trace_id;
    let spanId = row.span_id;
    let details = row.details as unknown;
    for (const { from, to } of real) {
      anchor = anchor
        .replaceAll(`${from.traceId}:${from.spanId}`, `${to.traceId}:${to.spanId}`)
        .replaceAll(from.spanId, to.spanId);
      if (traceId === from.traceId && spanId === from.spanId) {
        traceId = to.traceId;
        spanId = to.spanId;
      }
      details = moveCallRefs(details, from, to);
    }
    if (anchor === row.anchor && traceId === row.trace_id && spanId === row.span_id) continue;
    await sql`UPDATE findings SET anchor = ${anchor}, trace_id = ${traceId}, span_id = ${spanId},
        details = ${JSON.stringify(details)}::jsonb
      WHERE id = ${row.id} AND NOT EXISTS (
        SELECT 1 FROM findings o WHERE o.workspace_id = ${workspaceId}
           AND o.detector = ${row.detector} AND o.anchor = ${anchor} AND o.id <> ${row.id})`.execute(
      db,
    );
  }
}

/** `value` with every `{ traceId, spanId }` naming `from` naming `to` instead. */
function moveCallRefs(
  value: unknown,
  from: { traceId: string; spanId: string },
  to: { traceId: string; spanId: string },
): unknown {
  if (Array.isArray(value)) return value.map((v) => moveCallRefs(v, from, to));
  if (value === null || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = moveCallRefs(v, from, to);
  if (o.traceId === from.traceId && o.spanId === from.spanId) {
    out.traceId = to.traceId;
    out.spanId = to.spanId;
  }
  return out;
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

/**
 * Inserts compactions and returns marks for the new ones and for those that changed. One
 * compaction is one row whatever reported it (src/store/merge.ts): each incoming compaction
 * either is a re-sent source of a stored one (nothing to do), joins the nearest stored (or
 * earlier in the batch) compaction it is another source of, or is a new row. Stored candidates
 * are read in one query: the batch's conversations within the merge window of its times.
 */
export async function insertCompactions(
  db: Db,
  compactions: readonly Compaction[],
): Promise<IngestMark[]> {
  if (compactions.length === 0) return [];
  const workspaceId = compactions[0]!.workspaceId;
  let lo = BigInt(compactions[0]!.atNs);
  let hi = lo;
  for (const c of compactions) {
    const ns = BigInt(c.atNs);
    if (ns < lo) lo = ns;
    if (ns > hi) hi = ns;
  }
  const stored = await db
    .selectFrom('compactions')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('conversation_id', 'in', [...new Set(compactions.map((c) => c.conversationId))])
    .where('at_ns', '>=', String(lo - SAME_COMPACTION_NS))
    .where('at_ns', '<=', String(hi + SAME_COMPACTION_NS))
    .execute();
  interface Working {
    row?: Selectable<CompactionsTable>;
    conversationId: string;
    sources: CompactionSource[];
    changed: boolean;
  }
  const working: Working[] = stored.map((row) => {
    const sources = readSources(row.sources);
    return {
      row,
      conversationId: row.conversation_id,
      sources: sources.length > 0 ? sources : [sourceOf(toCompaction(row))],
      changed: false,
    };
  });
  const sorted = [...compactions].sort((a, b) =>
    BigInt(a.atNs) < BigInt(b.atNs) ? -1 : BigInt(a.atNs) > BigInt(b.atNs) ? 1 : 0,
  );
  for (const c of sorted) {
    const mine = working.filter((w) => w.conversationId === c.conversationId);
    if (mine.some((w) => w.sources.some((s) => s.sourceKey === c.sourceKey))) continue; // re-sent
    let best: Working | undefined;
    let bestDistance = 0n;
    for (const w of mine) {
      if (!sameCompaction(w.sources, c)) continue;
      const d = distanceNs(w.sources, c);
      if (best === undefined || d < bestDistance) {
        best = w;
        bestDistance = d;
      }
    }
    if (best) {
      best.sources = sortSources([...best.sources, sourceOf(c)]);
      best.changed = true;
    } else {
      working.push({ conversationId: c.conversationId, sources: [sourceOf(c)], changed: true });
    }
  }

  const marks: IngestMark[] = [];
  const where = (w: Working) => ({ workspaceId, conversationId: w.conversationId });
  const inserts = working.filter((w) => w.row === undefined);
  for (const chunk of chunks(inserts)) {
    const added = await db
      .insertInto('compactions')
      .values(
        chunk.map((w) => ({
          ...compactionRow(mergeCompaction(w.sources, where(w))),
          sources: JSON.stringify(w.sources),
        })),
      )
      .onConflict((oc) => oc.columns(['workspace_id', 'source_key']).doNothing())
      .returning(['conversation_id', 'at_ns'])
      .execute();
    marks.push(...toMarks(added, false));
  }
  for (const w of working) {
    if (w.row === undefined || !w.changed) continue;
    const before = toCompaction(w.row);
    const merged = mergeCompaction(w.sources, where(w));
    const { workspace_id: _w, ...set } = compactionRow(merged);
    await db
      .updateTable('compactions')
      .set({ ...set, sources: JSON.stringify(w.sources) })
      .where('id', '=', w.row.id)
      .execute();
    if (canonicalJson({ ...before, sourceKey: '' }) !== canonicalJson({ ...merged, sourceKey: '' }))
      marks.push({
        conversationId: w.conversationId,
        fromNs: minNs(before.atNs, merged.atNs),
        calls: 0,
      });
  }
  return marks;
}

/**
 * Gives the cost a log event reported (Claude Code `cost_usd`) to the stored row of its request
 * when that row has none: a span of the same request id outranks the log event and took the
 * row (src/store/merge.ts), but spans carry no cost. Rows with a cost keep it. Nothing the
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
 * Marks calls of the given requests as side calls (Claude Code `query_source` from log
 * events) and returns marks for their conversations: an already evaluated call that turns
 * out to be a side call makes the evaluator replay from it. A call that held logged tool
 * results as its parts while it was taken for a main call (its span came before its log event)
 * gives them up: `outcome.partsDropped` receives the next main call of its stream, whose input
 * they entered, for the caller to join them to.
 */
export async function markSideCalls(
  db: Db,
  workspaceId: string,
  sideCalls: ReadonlyArray<{ requestId: string; reason: string }>,
  outcome?: CallsOutcome,
): Promise<IngestMark[]> {
  const marks: IngestMark[] = [];
  for (const { requestId, reason } of sideCalls) {
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
    marks.push(...toMarks(changed, false));
    if (!outcome) continue;
    for (const row of changed) {
      const next = await db
        .selectFrom('llm_calls')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('conversation_id', '=', row.conversation_id)
        .where('stream_key', '=', row.stream_key)
        .where('side_call', 'is', null)
        .where('context_tokens', 'is not', null)
        .where('start_ns', '>', String(row.at_ns))
        .orderBy('start_ns')
        .limit(1)
        .executeTakeFirst();
      if (next) outcome.partsDropped.push(toLlmCall(next));
    }
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
