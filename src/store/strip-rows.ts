/**
 * The rows behind the context growth strip (src/reading/strip.ts): a conversation's or a run's
 * calls in `(start_ns, span_id)` order, only the columns the page draws (no raw spans, no
 * message content); its findings; and the compactions of its streams.
 */
import { sql } from 'kysely';
import type { InputParts } from '../model/calls.ts';
import type { Db } from './db.ts';
import { inScope, type Scope } from './scope.ts';

/** Which calls: a conversation's, or a run's (its run id or its trace id). */
export type StripScope = Scope;

/** One call as `json_build_array` gives it, in the order of the select in stripCalls. */
export type StripRow = [
  traceId: string,
  spanId: string,
  startNs: string,
  streamKey: string,
  agentId: string | null,
  sideCall: string | null,
  model: string | null,
  input: number | null,
  cacheRead: number | null,
  cacheWrite: number | null,
  output: number | null,
  context: number | null,
  window: number | null,
  windowSource: string | null,
  finish: string | null,
  parts: InputParts | null,
];

/** A finding of the strip's scope, as the strip marks it. */
export interface StripFindingRow {
  id: string;
  detector: string;
  severity: string;
  kind: string | null;
  traceId: string;
  spanId: string;
  summary: string;
  details: Record<string, unknown>;
}

/** The first `limit` calls of the scope, in start order, as tuples. */
export async function stripCalls(
  db: Db,
  workspaceId: string,
  scope: StripScope,
  limit: number,
): Promise<StripRow[]> {
  // one JSON text for every row: PGlite (and pg) decode one value instead of 16 per call, ~5x faster
  const page = db
    .selectFrom('llm_calls')
    .select([
      'trace_id',
      'span_id',
      'start_ns',
      'stream_key',
      'agent_id',
      'side_call',
      sql<string | null>`coalesce(response_model, request_model)`.as('model'),
      'input_tokens_raw',
      'cache_read_tokens',
      'cache_write_tokens',
      'output_tokens',
      'context_tokens',
      'context_window',
      'window_source',
      'finish_reason_raw',
      'parts',
    ])
    .where('workspace_id', '=', workspaceId)
    .where(inScope(scope))
    .orderBy('start_ns')
    .orderBy('span_id')
    .limit(limit)
    .as('c');
  const agg = await db
    .selectFrom(page)
    .select(
      sql<string | null>`json_agg(json_build_array(c.trace_id, c.span_id, c.start_ns::text,
        c.stream_key, c.agent_id, c.side_call, c.model, c.input_tokens_raw, c.cache_read_tokens,
        c.cache_write_tokens, c.output_tokens, c.context_tokens, c.context_window,
        c.window_source, c.finish_reason_raw, c.parts) ORDER BY c.start_ns, c.span_id)::text`.as(
        'rows',
      ),
    )
    .executeTakeFirst();
  return agg?.rows ? (JSON.parse(agg.rows) as StripRow[]) : [];
}

/** Every finding of the scope, by id. */
export async function stripFindings(
  db: Db,
  workspaceId: string,
  scope: StripScope,
): Promise<StripFindingRow[]> {
  const rows = await db
    .selectFrom('findings')
    .select(['id', 'detector', 'severity', 'kind', 'trace_id', 'span_id', 'summary', 'details'])
    .where('workspace_id', '=', workspaceId)
    .where(inScope(scope))
    .orderBy('id')
    .execute();
  return rows.map((f) => ({
    id: String(f.id),
    detector: f.detector,
    severity: f.severity,
    kind: f.kind,
    traceId: f.trace_id,
    spanId: f.span_id,
    summary: f.summary,
    details: (f.details ?? {}) as Record<string, unknown>,
  }));
}

/** The compactions of the scope, in time order. */
export async function stripCompactions(
  db: Db,
  workspaceId: string,
  scope: StripScope,
): Promise<Array<{ streamKey: string; atNs: string }>> {
  const rows = await db
    .selectFrom('compactions')
    .select(['stream_key', sql<string>`at_ns::text`.as('at_ns')])
    .where('workspace_id', '=', workspaceId)
    .where(inScope(scope))
    .orderBy('at_ns')
    .execute();
  return rows.map((c) => ({ streamKey: c.stream_key, atNs: c.at_ns }));
}

/** The conversations the scope's calls belong to (a run's: one, as a rule). */
export async function stripConversations(
  db: Db,
  workspaceId: string,
  scope: StripScope,
): Promise<string[]> {
  if ('conversationId' in scope) return [scope.conversationId];
  const rows = await db
    .selectFrom('llm_calls')
    .select('conversation_id')
    .distinct()
    .where('workspace_id', '=', workspaceId)
    .where(inScope(scope))
    .limit(16)
    .execute();
  return rows.map((r) => r.conversation_id);
}
