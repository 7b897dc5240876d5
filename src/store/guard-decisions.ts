/**
 * What the Claude Code tool-result guard did (migration 0090): one row per decision
 * (src/ingest/guard-spans.ts), and per conversation the sums the conversation page shows.
 */
import { sql } from 'kysely';
import type { GuardSummary } from '../model/conversations.ts';
import type { GuardDecision } from '../model/guard.ts';
import type { Db } from './db.ts';

/** Stores the decisions; a re-sent one (same span id) is stored once. Returns the rows added. */
export async function insertGuardDecisions(
  db: Db,
  decisions: readonly GuardDecision[],
): Promise<number> {
  if (decisions.length === 0) return 0;
  const added = await db
    .insertInto('guard_decisions')
    .values(
      decisions.map((d) => ({
        workspace_id: d.workspaceId,
        conversation_id: d.conversationId,
        span_id: d.spanId,
        at_ns: d.atNs,
        action: d.action,
        tool: d.tool,
        result_tokens: d.resultTokens,
        budget_tokens: d.budgetTokens,
        kept_out_tokens: d.keptOutTokens,
      })),
    )
    .onConflict((oc) => oc.columns(['workspace_id', 'conversation_id', 'span_id']).doNothing())
    .returning('span_id')
    .execute();
  return added.length;
}

/** The guard's work in one conversation (src/model/conversations.ts). */
export type { GuardSummary } from '../model/conversations.ts';

/** The guard's work in a conversation, or null when it did nothing there. */
export async function guardSummary(
  db: Db,
  workspaceId: string,
  conversationId: string,
): Promise<GuardSummary | null> {
  return (await guardSummaries(db, workspaceId, [conversationId])).get(conversationId) ?? null;
}

/** The guard's work in each of these conversations (those where it did nothing are absent). */
export async function guardSummaries(
  db: Db,
  workspaceId: string,
  conversationIds: readonly string[],
): Promise<Map<string, GuardSummary>> {
  const found = new Map<string, GuardSummary>();
  if (conversationIds.length === 0) return found;
  const rows = await db
    .selectFrom('guard_decisions')
    .where('workspace_id', '=', workspaceId)
    .where('conversation_id', 'in', conversationIds)
    .groupBy(['conversation_id', 'tool'])
    .select([
      'conversation_id',
      'tool',
      sql<string>`count(*) FILTER (WHERE action = 'narrowed')`.as('narrowed'),
      sql<string>`count(*) FILTER (WHERE action = 'warned')`.as('warned'),
      sql<string>`coalesce(sum(kept_out_tokens), 0)`.as('kept_out'),
    ])
    .orderBy('tool')
    .execute();
  for (const r of rows) {
    const tool = {
      tool: r.tool,
      narrowed: Number(r.narrowed),
      warned: Number(r.warned),
      keptOutTokens: Number(r.kept_out),
    };
    const summary = found.get(r.conversation_id) ?? {
      narrowed: 0,
      warned: 0,
      keptOutTokens: 0,
      tools: [],
    };
    summary.narrowed += tool.narrowed;
    summary.warned += tool.warned;
    summary.keptOutTokens += tool.keptOutTokens;
    summary.tools.push(tool);
    found.set(r.conversation_id, summary);
  }
  return found;
}

/**
 * The guard's decisions in these conversations, oldest first (the run view marks the calls
 * they acted on).
 */
export async function guardDecisionsOf(
  db: Db,
  workspaceId: string,
  conversationIds: readonly string[],
): Promise<GuardDecision[]> {
  if (conversationIds.length === 0) return [];
  const rows = await db
    .selectFrom('guard_decisions')
    .select([
      'conversation_id',
      'span_id',
      sql<string>`at_ns::text`.as('at_ns'),
      'action',
      'tool',
      'result_tokens',
      'budget_tokens',
      'kept_out_tokens',
    ])
    .where('workspace_id', '=', workspaceId)
    .where('conversation_id', 'in', conversationIds)
    .orderBy('at_ns')
    .orderBy('span_id')
    .execute();
  return rows.map((r) => ({
    workspaceId,
    conversationId: r.conversation_id,
    spanId: r.span_id,
    atNs: r.at_ns,
    action: r.action === 'warned' ? 'warned' : 'narrowed',
    tool: r.tool,
    resultTokens: Number(r.result_tokens),
    budgetTokens: Number(r.budget_tokens),
    keptOutTokens: Number(r.kept_out_tokens),
  }));
}
