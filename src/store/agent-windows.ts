/**
 * Windows the agent reported apart from its calls (src/ingest/agent-windows.ts, migration 0130):
 * kept per conversation and model, and written onto the conversation's calls of that model
 * (`context_window`, `window_source = 'agent'`), except where a workspace override gave the
 * window or the call's own usage is above the reported number. Calls stored before the report
 * are updated when it arrives, and their conversation is marked from the earliest of them, so
 * the evaluator judges them again (a rewind, as for a late call): the findings they should have
 * raised are created then. Calls stored after it get it as they are stored.
 */
import { sql } from 'kysely';
import type { ReportedWindow } from '../model/calls.ts';
import type { IngestMark } from './conversations.ts';
import type { Db } from './db.ts';

/** The latest report per conversation and model; the later of equal times. */
function latest(windows: readonly ReportedWindow[]): ReportedWindow[] {
  const out = new Map<string, ReportedWindow>();
  for (const w of windows) {
    const key = JSON.stringify([w.workspaceId, w.conversationId, w.model]);
    const seen = out.get(key);
    if (seen === undefined || BigInt(w.atNs) >= BigInt(seen.atNs)) out.set(key, w);
  }
  return [...out.values()].sort(
    (a, b) =>
      a.workspaceId.localeCompare(b.workspaceId) ||
      a.conversationId.localeCompare(b.conversationId) ||
      a.model.localeCompare(b.model),
  );
}

/**
 * Stores reported windows (all of one workspace) and gives them to the calls stored already;
 * returns the marks of the conversations whose calls changed (from the earliest changed call),
 * for the evaluator. A report that repeats the stored window changes nothing.
 */
export async function recordAgentWindows(
  db: Db,
  workspaceId: string,
  windows: readonly ReportedWindow[],
): Promise<IngestMark[]> {
  const changed: string[] = [];
  for (const w of latest(windows)) {
    const { rows } = await sql<{ conversation_id: string }>`
      INSERT INTO agent_windows (workspace_id, conversation_id, model, window_tokens, reporter, reported_at_ns)
      VALUES (${workspaceId}, ${w.conversationId}, ${w.model}, ${w.window}, ${w.reporter}, ${w.atNs}::int8)
      ON CONFLICT (workspace_id, conversation_id, model) DO UPDATE
        SET window_tokens = excluded.window_tokens, reporter = excluded.reporter,
            reported_at_ns = excluded.reported_at_ns
        WHERE agent_windows.window_tokens <> excluded.window_tokens
          AND agent_windows.reported_at_ns <= excluded.reported_at_ns
      RETURNING conversation_id`.execute(db);
    if (rows.length > 0) changed.push(w.conversationId);
  }
  return applyAgentWindows(db, workspaceId, [...new Set(changed)], null);
}

/**
 * Gives the stored reported windows of these conversations to their calls (those starting at
 * or after `fromNs` when given: the calls just stored); returns a mark per conversation whose
 * calls changed, from the earliest of them.
 */
export async function applyAgentWindows(
  db: Db,
  workspaceId: string,
  conversationIds: readonly string[],
  fromNs: string | null,
): Promise<IngestMark[]> {
  if (conversationIds.length === 0) return [];
  // `[1m]` aside, case aside: Claude Code's status line and its spans name the model alike
  const { rows } = await sql<{ conversation_id: string; from_ns: string }>`
    WITH changed AS (
      UPDATE llm_calls c
         SET context_window = w.window_tokens, window_source = 'agent'
        FROM agent_windows w
       WHERE w.workspace_id = ${workspaceId}
         AND w.conversation_id = ANY(${[...conversationIds]}::text[])
         AND c.workspace_id = w.workspace_id
         AND c.conversation_id = w.conversation_id
         AND c.start_ns >= ${fromNs ?? '0'}::int8
         AND lower(replace(w.model, '[1m]', '')) IN (
               lower(replace(c.response_model, '[1m]', '')),
               lower(replace(c.request_model, '[1m]', '')))
         AND c.window_source IS DISTINCT FROM 'override'
         AND (c.context_tokens IS NULL OR c.context_tokens <= w.window_tokens)
         AND (c.context_window IS DISTINCT FROM w.window_tokens
              OR c.window_source IS DISTINCT FROM 'agent')
      RETURNING c.conversation_id, c.start_ns
    )
    SELECT conversation_id, min(start_ns)::text AS from_ns FROM changed GROUP BY conversation_id
    ORDER BY conversation_id`.execute(db);
  return rows.map((row) => ({
    conversationId: row.conversation_id,
    fromNs: row.from_ns,
    calls: 0,
  }));
}
