/**
 * The per-conversation figures behind trends (src/model/trends.ts, `GET /api/trends`): read
 * from the rows the detectors read (`llm_calls`, `findings`) and the conversation's project.
 * The same query, unbounded, is the view `reporting_v1.conversation_trends` (migration 0150);
 * test/integration/api-trends.test.ts holds the two to the same answers. This one is bounded
 * in time, so it reads the partitions of the range, not every call of the workspace.
 */
import { sql } from 'kysely';
import type { ConversationTrend } from '../model/trends.ts';
import type { Db } from './db.ts';

interface Row {
  conversation_id: string;
  first_ns: string;
  model: string | null;
  producer: string;
  agent_version: string | null;
  project: string | null;
  calls: string;
  costed_calls: string;
  cost_usd: number | null;
  tokens_over: string | null;
  context_too_full: string;
  tool_takeover: string;
  history_lost: string;
  output_cut_off: string;
}

/**
 * The conversations of a workspace whose first call started in [`sinceNs`, `untilNs`), with all
 * of their calls (a conversation begun before `sinceNs` is left out whole).
 * `usageThreshold` is the workspace's: a call counts toward `tokensOverThreshold` when its
 * stored context tokens over its stored window reach it (the context_too_full rule, per call).
 */
export async function conversationTrends(
  db: Db,
  workspaceId: string,
  range: { sinceNs: bigint; untilNs: bigint; usageThreshold: number },
): Promise<ConversationTrend[]> {
  const since = String(range.sinceNs);
  const until = String(range.untilNs);
  const { rows } = await sql<Row>`
    WITH conv AS (
      SELECT
        c.conversation_id,
        min(c.start_ns) AS first_ns,
        count(*) AS calls,
        sum(c.cost_usd) AS cost_usd,
        count(c.cost_usd) AS costed_calls,
        sum(c.context_tokens) FILTER (
          WHERE c.context_window > 0
            AND c.context_tokens::float8 / c.context_window >= ${range.usageThreshold}::float8
        ) AS tokens_over,
        (array_agg(COALESCE(c.response_model, c.request_model)
           ORDER BY c.side_call IS NOT NULL, c.start_ns, c.span_id)
           FILTER (WHERE COALESCE(c.response_model, c.request_model) IS NOT NULL))[1] AS model,
        (array_agg(c.producer ORDER BY c.side_call IS NOT NULL, c.start_ns, c.span_id))[1] AS producer,
        max(c.agent_version) AS agent_version
      FROM llm_calls c
      WHERE c.workspace_id = ${workspaceId} AND c.start_ns >= ${since}::int8
      GROUP BY c.conversation_id
      HAVING min(c.start_ns) < ${until}::int8
         AND NOT EXISTS (SELECT 1 FROM llm_calls e
                          WHERE e.workspace_id = ${workspaceId}
                            AND e.conversation_id = c.conversation_id
                            AND e.start_ns < ${since}::int8)
    )
    SELECT conv.conversation_id, conv.first_ns::text AS first_ns, conv.model, conv.producer,
           conv.agent_version, p.project, conv.calls::text AS calls,
           conv.costed_calls::text AS costed_calls, conv.cost_usd::float8 AS cost_usd,
           conv.tokens_over::text AS tokens_over,
           COALESCE(f.context_too_full, 0)::text AS context_too_full,
           COALESCE(f.tool_takeover, 0)::text AS tool_takeover,
           COALESCE(f.history_lost, 0)::text AS history_lost,
           COALESCE(f.output_cut_off, 0)::text AS output_cut_off
      FROM conv
      LEFT JOIN conversations p ON p.workspace_id = ${workspaceId} AND p.id = conv.conversation_id
      LEFT JOIN LATERAL (
        SELECT count(*) FILTER (WHERE detector = 'context_too_full') AS context_too_full,
               count(*) FILTER (WHERE detector = 'tool_takeover') AS tool_takeover,
               count(*) FILTER (WHERE detector = 'history_lost') AS history_lost,
               count(*) FILTER (WHERE detector = 'output_cut_off') AS output_cut_off
          FROM findings
         WHERE workspace_id = ${workspaceId} AND conversation_id = conv.conversation_id
      ) f ON true
     ORDER BY conv.first_ns, conv.conversation_id`.execute(db);
  return rows.map((row) => ({
    conversationId: row.conversation_id,
    firstNs: row.first_ns,
    model: row.model,
    producer: row.producer,
    agentVersion: row.agent_version,
    project: row.project,
    calls: Number(row.calls),
    costedCalls: Number(row.costed_calls),
    costUsd: row.cost_usd === null ? null : Number(row.cost_usd),
    tokensOverThreshold: row.tokens_over === null ? 0 : Number(row.tokens_over),
    findings: {
      context_too_full: Number(row.context_too_full),
      tool_takeover: Number(row.tool_takeover),
      history_lost: Number(row.history_lost),
      output_cut_off: Number(row.output_cut_off),
    },
  }));
}

/** When the first guard decision of the workspace was made (Unix ns); null when none is stored. */
export async function firstGuardDecisionNs(db: Db, workspaceId: string): Promise<bigint | null> {
  const row = await db
    .selectFrom('guard_decisions')
    .select(sql<string | null>`min(at_ns)::text`.as('at_ns'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  return row?.at_ns ? BigInt(row.at_ns) : null;
}
