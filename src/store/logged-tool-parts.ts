/**
 * Joins Claude Code's logged tool results to the calls whose input they entered (conventions
 * §5.0): a `tool_result` log event's bytes enter the input of the next main-thread call of the
 * session, or the next call of the same sub-agent, after it. Logs and spans are exported on
 * separate schedules, so either side may be stored first: this runs after each batch, for the
 * calls the batch touched, and fills (or refreshes) those calls' `parts` with the results logged
 * since their stream's previous call, in estimated tokens (src/ingest/tool-parts.ts). The event
 * carries no agent id; the `claude_code.tool` span with the same `tool_use_id` says which agent
 * ran the tool (else the main thread). Returns marks for the calls it changed, so conversations
 * already evaluated are evaluated again from there.
 */
import { sql } from 'kysely';
import { partsFromBytes } from '../ingest/tool-parts.ts';
import type { InputParts, LlmCall, ToolResult } from '../model/calls.ts';
import type { IngestMark } from './conversations.ts';
import type { Db } from './db.ts';

const CLAUDE_CODE_PRODUCERS = ['claude_code', 'claude_code_log'];

/** A call that may receive logged results, and its stream's previous call. */
interface Target {
  conversationId: string;
  streamKey: string;
  traceId: string;
  spanId: string;
  startNs: string;
  parts: InputParts | null;
}

/** The stream a logged result belongs to: the tool span's (same tool_use_id), else its own. */
async function resultStreams(
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

/** The first Claude Code main-loop call of the stream starting at or after `atNs`. */
async function nextCall(
  db: Db,
  workspaceId: string,
  where: { conversationId: string; streamKey: string; atNs: string },
): Promise<Target | undefined> {
  const row = await db
    .selectFrom('llm_calls')
    .select(['conversation_id', 'stream_key', 'trace_id', 'span_id', 'start_ns', 'parts'])
    .where('workspace_id', '=', workspaceId)
    .where('conversation_id', '=', where.conversationId)
    .where('stream_key', '=', where.streamKey)
    .where('side_call', 'is', null)
    .where('producer', 'in', CLAUDE_CODE_PRODUCERS)
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
}): Target {
  return {
    conversationId: row.conversation_id,
    streamKey: row.stream_key,
    traceId: row.trace_id,
    spanId: row.span_id,
    startNs: String(row.start_ns),
    parts: (row.parts ?? null) as InputParts | null,
  };
}

/** Bytes of each tool's results logged for the target's stream since its previous call. */
async function loggedSince(
  db: Db,
  workspaceId: string,
  t: Target,
): Promise<Record<string, number>> {
  const prev = await db
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
  const rows = await sql<{ tool_name: string; bytes: string | number }>`
    SELECT r.tool_name, sum(r.result_size) AS bytes
      FROM tool_results r
      LEFT JOIN tool_results s
        ON s.workspace_id = r.workspace_id AND s.conversation_id = r.conversation_id
       AND s.source = 'claude_code_span' AND s.tool_call_id = r.tool_call_id
     WHERE r.workspace_id = ${workspaceId} AND r.conversation_id = ${t.conversationId}
       AND r.source = 'claude_code_log' AND r.size_unit = 'bytes' AND r.result_size IS NOT NULL
       AND COALESCE(s.stream_key, r.stream_key) = ${t.streamKey}
       AND r.at_ns <= ${t.startNs}
       ${prev === undefined ? sql`` : sql`AND r.at_ns > ${String(prev.start_ns)}`}
     GROUP BY r.tool_name`.execute(db);
  return Object.fromEntries(rows.rows.map((r) => [r.tool_name, Number(r.bytes)]));
}

function sameTools(a: Record<string, number>, b: Record<string, number>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

/**
 * Fills the parts of the Claude Code calls touched by a batch (its new calls, and the next
 * call after each of its logged or span tool results) from the tool results logged before
 * them. Calls whose parts came from message content are left alone.
 */
export async function joinLoggedToolResults(
  db: Db,
  workspaceId: string,
  batch: { calls: readonly LlmCall[]; toolResults: readonly ToolResult[] },
): Promise<IngestMark[]> {
  const targets = new Map<string, Target>();
  for (const c of batch.calls) {
    if (c.sideCall !== null || c.contextTokens === null) continue;
    if (!CLAUDE_CODE_PRODUCERS.includes(c.producer)) continue;
    targets.set(`${c.traceId}:${c.spanId}`, {
      conversationId: c.conversationId,
      streamKey: c.streamKey,
      traceId: c.traceId,
      spanId: c.spanId,
      startNs: c.startNs,
      parts: c.parts,
    });
  }
  const claudeCodeResults = batch.toolResults.filter((r) => r.source.startsWith('claude_code'));
  for (const at of await resultStreams(db, workspaceId, claudeCodeResults)) {
    const next = await nextCall(db, workspaceId, at);
    if (next !== undefined) targets.set(`${next.traceId}:${next.spanId}`, next);
  }

  const marks: IngestMark[] = [];
  for (const t of targets.values()) {
    // sizes from message content, or exact tokens from tool spans (`result_tokens`), win
    if (t.parts !== null && t.parts.source !== 'tool_spans') continue;
    if (t.parts?.estimatedFrom === undefined && Object.keys(t.parts?.tools ?? {}).length > 0)
      continue;
    const bytes = await loggedSince(db, workspaceId, t);
    const parts = partsFromBytes(bytes, null);
    // the system prompt's size (detailed beta tracing) stays as the span said
    parts.system = t.parts?.system ?? null;
    if (t.parts !== null && sameTools(t.parts.tools, parts.tools) && t.parts.estimatedFrom)
      continue;
    if (t.parts === null && Object.keys(parts.tools).length === 0) continue;
    const changed = await db
      .updateTable('llm_calls')
      .set({ parts: sql<string>`${JSON.stringify(parts)}::jsonb` })
      .where('workspace_id', '=', workspaceId)
      .where('trace_id', '=', t.traceId)
      .where('span_id', '=', t.spanId)
      .where('side_call', 'is', null)
      .returning(['conversation_id', 'start_ns'])
      .execute();
    for (const row of changed) {
      marks.push({ conversationId: row.conversation_id, fromNs: String(row.start_ns), calls: 0 });
    }
  }
  return marks;
}
