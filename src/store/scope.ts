/**
 * Which rows of a table belong to a conversation, or to a run (its run id or its trace id). A
 * run id is the row's trace id or, for producers with one trace per prompt, its conversation id
 * (src/ingest: spans.ts, claude-code-logs.ts, codex.ts, transcript.ts, codex-sessions.ts), so a
 * run's rows are read by the trace id or by the conversation (the indexes of both; migration
 * 0110 dropped the one on run_id).
 */
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
      : eb.or([
          eb(sql.ref('trace_id'), '=', scope.runId),
          eb.and([
            eb(sql.ref('conversation_id'), '=', scope.runId),
            eb(sql.ref('run_id'), '=', scope.runId),
          ]),
        ]);
}
