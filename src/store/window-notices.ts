/**
 * Window notices (migration 0120, issue 34 §2): the first time a workspace's calls of a model go
 * unjudged for lack of a window, one `window_notices` row and one `window.unknown` delivery per
 * channel of the Context rot alert, written in the evaluation's transaction (the outbox, like a
 * finding's). While the row is open no other notice goes out for that model; a window override
 * saved for it closes the row ({@link closeWindowNotices}), so the model going unknown again is
 * announced again.
 *
 * A notice goes to every attached channel whatever its minimum severity: a detector blind to a
 * model hides findings of every severity, the critical ones too.
 */
import { sql } from 'kysely';
import { isBigintId } from './channels.ts';
import type { Db } from './db.ts';

/** The event of a window notice's deliveries (and the webhook payload's `type`). */
export const WINDOW_UNKNOWN_EVENT = 'window.unknown';

/** A model's calls one evaluation (or a batch of them) could not judge for lack of a window. */
export interface UnjudgedCalls {
  workspaceId: string;
  /** The response model, else the request model. */
  model: string;
  calls: number;
  conversations: number;
  /** One conversation with such calls (the notice names it). */
  conversationId: string;
}

/** A window notice as the channels announce it. */
export interface WindowNotice {
  id: string;
  workspace: string;
  model: string;
  /** The unjudged calls of the evaluations that raised the notice (more may have come since). */
  calls: number;
  conversations: number;
  conversationId: string;
  createdAt: string;
}

/** The unjudged calls of several evaluations, one entry per workspace and model, in key order. */
export function mergeUnjudged(entries: readonly UnjudgedCalls[]): UnjudgedCalls[] {
  const merged = new Map<string, UnjudgedCalls>();
  for (const entry of entries) {
    const key = JSON.stringify([entry.workspaceId, entry.model]);
    const known = merged.get(key);
    merged.set(
      key,
      known === undefined
        ? { ...entry }
        : {
            ...known,
            calls: known.calls + entry.calls,
            conversations: known.conversations + entry.conversations,
          },
    );
  }
  return [...merged.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, e]) => e);
}

/**
 * Opens a notice for each workspace and model that has none open, and queues its deliveries;
 * a model with an open notice is skipped. One statement; run it in the evaluation's
 * transaction. Rows are written in (workspace, model) order, so two evaluators noting the same
 * models cannot deadlock; the second waits for the first and then skips what it wrote.
 */
export async function noteUnknownWindows(
  db: Db,
  unjudged: readonly UnjudgedCalls[],
): Promise<{ notices: number; deliveries: number }> {
  const rows = mergeUnjudged(unjudged);
  if (rows.length === 0) return { notices: 0, deliveries: 0 };
  const column = <T>(pick: (row: UnjudgedCalls) => T) => rows.map(pick);
  const result = await sql<{ notices: string; deliveries: string }>`
    WITH noticed AS (
      INSERT INTO window_notices (workspace_id, model, calls, conversations, conversation_id)
      SELECT * FROM unnest(
        ${column((r) => r.workspaceId)}::text[],
        ${column((r) => r.model)}::text[],
        ${column((r) => r.calls)}::int4[],
        ${column((r) => r.conversations)}::int4[],
        ${column((r) => r.conversationId)}::text[]
      )
      ON CONFLICT (workspace_id, model) WHERE known_at IS NULL DO NOTHING
      RETURNING id, workspace_id
    ), queued AS (
      INSERT INTO deliveries (id, workspace_id, notice_id, channel_id, event)
      SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), n.workspace_id, n.id,
             ac.channel_id, ${WINDOW_UNKNOWN_EVENT}
        FROM noticed n
        JOIN alert_channels ac ON ac.workspace_id = n.workspace_id
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM noticed)::text AS notices,
           (SELECT count(*) FROM queued)::text AS deliveries`.execute(db);
  const counts = result.rows[0];
  return { notices: Number(counts?.notices ?? 0), deliveries: Number(counts?.deliveries ?? 0) };
}

/** The models of the workspace's open notices (no window known for them when noticed). */
export async function openWindowNoticeModels(db: Db, workspaceId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('window_notices')
    .select('model')
    .where('workspace_id', '=', workspaceId)
    .where('known_at', 'is', null)
    .orderBy('model')
    .execute();
  return rows.map((row) => row.model);
}

/**
 * Closes the open notices of `models` (a window override now gives them a window): the model
 * going unknown again is a new notice. Returns how many were closed.
 */
export async function closeWindowNotices(
  db: Db,
  workspaceId: string,
  models: readonly string[],
): Promise<number> {
  if (models.length === 0) return 0;
  const result = await db
    .updateTable('window_notices')
    .set({ known_at: sql`now()` })
    .where('workspace_id', '=', workspaceId)
    .where('known_at', 'is', null)
    .where('model', 'in', [...models])
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** A notice of the workspace, or undefined. */
export async function getWindowNotice(
  db: Db,
  workspaceId: string,
  noticeId: string,
): Promise<WindowNotice | undefined> {
  if (!isBigintId(noticeId)) return undefined;
  const row = await db
    .selectFrom('window_notices')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', noticeId)
    .executeTakeFirst();
  return (
    row && {
      id: String(row.id),
      workspace: row.workspace_id,
      model: row.model,
      calls: row.calls,
      conversations: row.conversations,
      conversationId: row.conversation_id,
      createdAt: new Date(row.created_at).toISOString(),
    }
  );
}
