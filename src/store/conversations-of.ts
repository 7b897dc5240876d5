/**
 * Which conversations hold calls of a producer: a session file whose calls share no id with the
 * agent's telemetry (Gemini CLI's chat files) is not taken for a session the telemetry stored
 * (src/receiver/pipeline.ts).
 */
import type { Db } from './db.ts';

/** The conversations among `conversationIds` that hold calls of `producer`. */
export async function conversationsWithCallsOf(
  db: Db,
  workspaceId: string,
  conversationIds: readonly string[],
  producer: string,
): Promise<Set<string>> {
  if (conversationIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('llm_calls')
    .select('conversation_id')
    .distinct()
    .where('workspace_id', '=', workspaceId)
    .where('conversation_id', 'in', [...conversationIds])
    .where('producer', '=', producer)
    .execute();
  return new Set(rows.map((r) => r.conversation_id));
}
