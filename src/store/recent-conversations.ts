/**
 * The conversations of a workspace with calls in a time window, most recently active first:
 * what the Context rot alert's preview (src/evaluator/preview.ts) replays. One grouped scan of
 * the workspace's calls since the window's start; the caller bounds the answer with `limit`.
 */
import type { Db } from './db.ts';

/** A conversation with calls in the window. */
export interface RecentConversation {
  conversationId: string;
  /** Calls of the conversation that start in the window. */
  calls: number;
  /** Start of its latest call (Unix nanoseconds, decimal string). */
  lastCallNs: string;
}

/**
 * Up to `limit` conversations with at least one call starting at or after `sinceNs` (Unix
 * nanoseconds), the most recently active first (ties by id).
 */
export async function listConversationsSince(
  db: Db,
  workspaceId: string,
  sinceNs: string,
  limit: number,
): Promise<RecentConversation[]> {
  const rows = await db
    .selectFrom('llm_calls')
    .where('workspace_id', '=', workspaceId)
    .where('start_ns', '>=', sinceNs)
    .groupBy('conversation_id')
    .select((eb) => [
      'conversation_id',
      eb.fn.countAll<string>().as('calls'),
      eb.fn.max('start_ns').as('last_ns'),
    ])
    .orderBy('last_ns', 'desc')
    .orderBy('conversation_id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    conversationId: row.conversation_id,
    calls: Number(row.calls),
    lastCallNs: String(row.last_ns),
  }));
}
