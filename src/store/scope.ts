/** Which rows of a table belong to a conversation, or to a run (its run id or its trace id). */
import { sql, type ExpressionBuilder } from 'kysely';
import type { Database } from './schema.ts';

export type Scope = { conversationId: string } | { runId: string };

/** The tables with a conversation, a run and a trace id. */
type ScopedTable = 'llm_calls' | 'compactions' | 'findings';

/** A `where` for the rows of `scope`. */
export function inScope(scope: Scope) {
  return <T extends ScopedTable>(eb: ExpressionBuilder<Database, T>) =>
    'conversationId' in scope
      ? eb(sql.ref('conversation_id'), '=', scope.conversationId)
      : eb.or([eb(sql.ref('run_id'), '=', scope.runId), eb(sql.ref('trace_id'), '=', scope.runId)]);
}
