/**
 * The queries behind joining Claude Code's logged tool results to the calls whose input they
 * entered (the rule is the receiver's: src/receiver/logged-tool-parts.ts): which stream a
 * logged result belongs to, the next call of a stream, the bytes logged since a stream's
 * previous call, and writing a call's parts.
 */
import { sql } from 'kysely';
import type { InputParts, ToolResult } from '../model/calls.ts';
import type { Db } from './db.ts';

/** A call that may receive logged results, and its stream's previous call. */
export interface ToolPartsTarget {
  conversationId: string;
  streamKey: string;
  traceId: string;
  spanId: string;
  startNs: string;
  parts: InputParts | null;
}

/** The stream a logged result belongs to: the tool span's (same tool_use_id), else its own. */
export async function resultStreams(
  db: Db,
  workspaceId: string,
  results: readonly ToolResult[],
): Promise<Array<{ conversationId: string; streamKey: string; atNs: string }>> {
  if (results.length === 0) return [];
  const ids = results.flatMap((r) => (r.toolCallId === null ? [] : [r.toolCallId]));
  const spans =
    ids.length === 0
      ? []
      : await db
          .selectFrom('tool_results')
          .select(['tool_call_id', 'stream_key'])
          .where('workspace_id', '=', workspaceId)
          .where('source', '=', 'claude_code_span')
          .where('tool_call_id', 'in', ids)
          .execute();
  const byId = new Map(spans.map((s) => [s.tool_call_id, s.stream_key]));
  return results.map((r) => ({
    conversationId: r.conversationId,
    streamKey: (r.toolCallId !== null ? byId.get(r.toolCallId) : undefined) ?? r.streamKey,
    atNs: r.atNs,
  }));
}

/** The first main-loop call of one of `producers` in the stream starting at or after `atNs`. */
export async function nextCall(
  db: Db,
  workspaceId: string,
  where: { conversationId: string; streamKey: string; atNs: string },
  producers: readonly string[],
): Promise<ToolPartsTarget | undefined> {
  const row = await db
    .selectFrom('llm_calls')
    .select(['conversation_id', 'stream_key', 'trace_id', 'span_id', 'start_ns', 'parts'])
    .where('workspace_id', '=', workspaceId)
    .where('conversation_id', '=', where.conversationId)
    .where('stream_key', '=', where.streamKey)
    .where('side_call', 'is', null)
    .where('producer', 'in', producers)
    // a request that failed (no usage) held nothing: its retry is the call that does
    .where('context_tokens', 'is not', null)
    .where('start_ns', '>=', where.atNs)
    .orderBy('start_ns')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : toTarget(row);
}

function toTarget(row: {
  conversation_id: string;
  stream_key: string;
  trace_id: string;
  span_id: string;
  start_ns: string | number | bigint;
  parts: unknown;
}): ToolPartsTarget {
  return {
    conversationId: row.conversation_id,
    streamKey: row.stream_key,
    traceId: row.trace_id,
    spanId: row.span_id,
    startNs: String(row.start_ns),
    parts: (row.parts ?? null) as InputParts | null,
  };
}

/**
 * The start of the call before `t` in its stream that carried a token count (side calls do not
 * count); undefined when `t` is the stream's first. Results logged after it belong to `t`.
 */
export function previousCountedCall(
  db: Db,
  workspaceId: string,
  t: ToolPartsTarget,
): Promise<{ start_ns: string } | undefined> {
  return db
    .selectFrom('llm_calls')
    .select('start_ns')
    .where('workspace_id', '=', workspaceId)
    .where('conversation_id', '=', t.conversationId)
    .where('stream_key', '=', t.streamKey)
    .where('side_call', 'is', null)
    .where('context_tokens', 'is not', null)
    .where('start_ns', '<', t.startNs)
    .orderBy('start_ns', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Bytes of each tool's results logged for the target's stream since its previous call, from
 * results of the given `sources` (default Claude Code's logged ones).
 */
export async function loggedSince(
  db: Db,
  workspaceId: string,
  t: ToolPartsTarget,
  sources: readonly string[] = ['claude_code_log'],
): Promise<Record<string, number>> {
  const prev = await previousCountedCall(db, workspaceId, t);
  // the tool span's name wins: Claude Code's logs call every MCP tool `mcp_tool` when they
  // carry no `tool_parameters` (OTEL_LOG_TOOL_DETAILS off), its span names it
  const rows = await sql<{ tool_name: string; bytes: string | number }>`
    SELECT COALESCE(s.tool_name, r.tool_name) AS tool_name, sum(r.result_size) AS bytes
      FROM tool_results r
      LEFT JOIN tool_results s
        ON s.workspace_id = r.workspace_id AND s.conversation_id = r.conversation_id
       AND s.source = 'claude_code_span' AND s.tool_call_id = r.tool_call_id
     WHERE r.workspace_id = ${workspaceId} AND r.conversation_id = ${t.conversationId}
       AND r.source IN (${sql.join([...sources])}) AND r.size_unit = 'bytes'
       AND r.result_size IS NOT NULL
       AND COALESCE(s.stream_key, r.stream_key) = ${t.streamKey}
       AND r.at_ns <= ${t.startNs}
       ${prev === undefined ? sql`` : sql`AND r.at_ns > ${String(prev.start_ns)}`}
     GROUP BY COALESCE(s.tool_name, r.tool_name)`.execute(db);
  return Object.fromEntries(rows.rows.map((r) => [r.tool_name, Number(r.bytes)]));
}

/** Sets the parts of a main-loop call; returns the conversation and start of the call changed. */
export async function setCallParts(
  db: Db,
  workspaceId: string,
  t: ToolPartsTarget,
  parts: InputParts,
): Promise<Array<{ conversationId: string; startNs: string }>> {
  const changed = await db
    .updateTable('llm_calls')
    .set({ parts: sql<string>`${JSON.stringify(parts)}::jsonb` })
    .where('workspace_id', '=', workspaceId)
    .where('trace_id', '=', t.traceId)
    .where('span_id', '=', t.spanId)
    .where('side_call', 'is', null)
    .returning(['conversation_id', 'start_ns'])
    .execute();
  return changed.map((row) => ({
    conversationId: row.conversation_id,
    startNs: String(row.start_ns),
  }));
}
