/**
 * Requests refused for their token (migration 0080): counted per workspace ('' when no token
 * told it), status, route, reason code and sender, with first and last seen. Every server
 * process adds what it refused (src/api/refusals.ts batches them), so processes sharing one
 * PostgreSQL show one picture, and a restart forgets nothing.
 */
import { sql } from 'kysely';
import type { Db } from './db.ts';

/** The workspace of refusals no token told one. */
export const NO_WORKSPACE = '';

/** Rows kept at most, and for how long one not seen again is kept. */
const KEEP_ROWS = 1_000;
const KEEP_DAYS = 30;

export interface RefusalKey {
  workspaceId: string;
  status: number;
  route: string;
  reason: string;
  agent: string;
}

export interface RefusalCount extends RefusalKey {
  count: number;
  firstSeen: Date;
  lastSeen: Date;
}

/** Adds counts (rows in key order: processes adding the same keys cannot deadlock). */
export async function addRefusals(db: Db, rows: readonly RefusalCount[]): Promise<void> {
  if (rows.length === 0) return;
  const sorted = [...rows].sort((a, b) => compareKeys(a, b));
  await db
    .insertInto('auth_refusals')
    .values(
      sorted.map((row) => ({
        workspace_id: row.workspaceId,
        status: row.status,
        route: row.route,
        reason: row.reason,
        agent: row.agent,
        count: row.count,
        first_seen: row.firstSeen,
        last_seen: row.lastSeen,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['workspace_id', 'status', 'route', 'reason', 'agent']).doUpdateSet({
        count: sql`auth_refusals.count + excluded.count`,
        first_seen: sql`LEAST(auth_refusals.first_seen, excluded.first_seen)`,
        last_seen: sql`GREATEST(auth_refusals.last_seen, excluded.last_seen)`,
      }),
    )
    .execute();
}

/** Removes rows not seen for 30 days, and all but the 1000 seen last. */
export async function pruneRefusals(db: Db, now = new Date()): Promise<void> {
  const cutoff = new Date(now.getTime() - KEEP_DAYS * 24 * 60 * 60 * 1000);
  await db.deleteFrom('auth_refusals').where('last_seen', '<', cutoff).execute();
  await sql`
    DELETE FROM auth_refusals WHERE (workspace_id, status, route, reason, agent) NOT IN (
      SELECT workspace_id, status, route, reason, agent FROM auth_refusals
       ORDER BY last_seen DESC LIMIT ${KEEP_ROWS})`.execute(db);
}

/**
 * The refusals seen since `since`: the workspace's, and those of no workspace when
 * `withoutWorkspace`; last seen first, at most `limit`.
 */
export async function recentRefusals(
  db: Db,
  options: { workspaceId: string; since: Date; withoutWorkspace: boolean; limit?: number },
): Promise<RefusalCount[]> {
  const workspaces = options.withoutWorkspace
    ? [options.workspaceId, NO_WORKSPACE]
    : [options.workspaceId];
  const rows = await db
    .selectFrom('auth_refusals')
    .selectAll()
    .where('workspace_id', 'in', workspaces)
    .where('last_seen', '>=', options.since)
    .orderBy('last_seen', 'desc')
    .orderBy('count', 'desc')
    .limit(options.limit ?? 50)
    .execute();
  return rows.map((row) => ({
    workspaceId: row.workspace_id,
    status: row.status,
    route: row.route,
    reason: row.reason,
    agent: row.agent,
    count: Number(row.count),
    firstSeen: new Date(row.first_seen),
    lastSeen: new Date(row.last_seen),
  }));
}

/**
 * When the workspace last accepted new data (the newest `last_ingest_at` of its conversations),
 * or null when it never did: a refusal seen before it was followed by a sender that got
 * through, so its cause is likely fixed.
 */
export async function lastAcceptedIngest(db: Db, workspaceId: string): Promise<Date | null> {
  const row = await db
    .selectFrom('conversations')
    .select(sql<Date | null>`max(last_ingest_at)`.as('at'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  return row?.at ? new Date(row.at) : null;
}

/** How many requests no token told the workspace of were refused since `since`, and when last. */
export async function refusalsWithoutWorkspace(
  db: Db,
  since: Date,
): Promise<{ count: number; lastSeen: Date | null }> {
  const row = await db
    .selectFrom('auth_refusals')
    .select([
      sql<string | null>`sum(count)::text`.as('count'),
      sql<Date | null>`max(last_seen)`.as('last_seen'),
    ])
    .where('workspace_id', '=', NO_WORKSPACE)
    .where('last_seen', '>=', since)
    .executeTakeFirst();
  return {
    count: Number(row?.count ?? 0),
    lastSeen: row?.last_seen ? new Date(row.last_seen) : null,
  };
}

function compareKeys(a: RefusalKey, b: RefusalKey): number {
  const pairs: Array<[string | number, string | number]> = [
    [a.workspaceId, b.workspaceId],
    [a.status, b.status],
    [a.route, b.route],
    [a.reason, b.reason],
    [a.agent, b.agent],
  ];
  for (const [x, y] of pairs) if (x !== y) return x < y ? -1 : 1;
  return 0;
}
