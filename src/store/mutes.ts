/**
 * Mutes (migration 0160): a known problem that should stop alerting. A mute matches a finding
 * on every field it sets: the detector, the project of the finding's conversation (exactly as
 * stored) and the finding's model; at least one is set (the table refuses a mute with none).
 * It holds until `until`, or until deleted when that is null. A matching finding is stored and
 * listed as any other; only its deliveries are written `muted` (src/store/deliveries.ts).
 * Every function takes the database handle first; the caller owns the transaction.
 */
import { sql, type Selectable } from 'kysely';
import type { DetectorId } from '../model/findings.ts';
import { isBigintId } from './channels.ts';
import type { Db } from './db.ts';
import type { MutesTable } from './schema.ts';

/** A mute as the API shows it. */
export interface Mute {
  id: string;
  detector: DetectorId | null;
  project: string | null;
  model: string | null;
  /** When it stops holding (ISO 8601); null: until deleted. */
  until: string | null;
  note: string | null;
  createdAt: string;
  /** False once `until` has passed (it matches nothing any more, and stays listed). */
  active: boolean;
}

/** What a new mute matches on (at least one set) and how long it holds. */
export interface MuteDraft {
  detector?: DetectorId | undefined;
  project?: string | undefined;
  model?: string | undefined;
  until?: Date | undefined;
  note?: string | undefined;
}

function toMute(row: Selectable<MutesTable> & { active: boolean }): Mute {
  return {
    id: String(row.id),
    detector: row.detector as DetectorId | null,
    project: row.project,
    model: row.model,
    until: row.until ? new Date(row.until).toISOString() : null,
    note: row.note,
    createdAt: new Date(row.created_at).toISOString(),
    active: row.active,
  };
}

const activeSql = sql<boolean>`(until IS NULL OR until > now())`;

/** Creates a mute. The caller checks that it matches on something (the table refuses it too). */
export async function createMute(db: Db, workspaceId: string, draft: MuteDraft): Promise<Mute> {
  const row = await db
    .insertInto('mutes')
    .values({
      workspace_id: workspaceId,
      detector: draft.detector ?? null,
      project: draft.project ?? null,
      model: draft.model ?? null,
      until: draft.until ?? null,
      note: draft.note ?? null,
    })
    .returningAll()
    .returning(activeSql.as('active'))
    .executeTakeFirstOrThrow();
  return toMute(row);
}

/** Largest page {@link listMutes} returns. */
export const MAX_MUTES_PAGE = 200;

/** A workspace's mutes, newest first (by id), `limit` at a time; `after` continues a page. */
export async function listMutes(
  db: Db,
  workspaceId: string,
  page: { limit: number; after?: readonly [id: string] | undefined },
): Promise<{ items: Mute[]; next: [string] | null }> {
  const limit = Math.min(Math.max(1, Math.trunc(page.limit)), MAX_MUTES_PAGE);
  let query = db
    .selectFrom('mutes')
    .selectAll()
    .select(activeSql.as('active'))
    .where('workspace_id', '=', workspaceId);
  if (page.after !== undefined) query = query.where('id', '<', page.after[0]);
  const rows = await query
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  const shown = rows.slice(0, limit);
  const last = shown.at(-1);
  return {
    items: shown.map(toMute),
    next: rows.length > limit && last ? [String(last.id)] : null,
  };
}

/** Deletes a mute; false when the workspace has none with that id. */
export async function deleteMute(db: Db, workspaceId: string, id: string): Promise<boolean> {
  if (!isBigintId(id)) return false;
  const result = await db
    .deleteFrom('mutes')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** What a mute matches on, for {@link muteMatching}. */
export type MuteRule = Pick<Mute, 'id' | 'detector' | 'project' | 'model'>;

/** The mutes of a workspace that hold now, lowest id first (one read for a batch of findings). */
export async function activeMutes(db: Db, workspaceId: string): Promise<MuteRule[]> {
  const rows = await db
    .selectFrom('mutes')
    .select(['id', 'detector', 'project', 'model'])
    .where('workspace_id', '=', workspaceId)
    .where(activeSql)
    .orderBy('id', 'asc')
    .execute();
  return rows.map((row) => ({
    id: String(row.id),
    detector: row.detector as DetectorId | null,
    project: row.project,
    model: row.model,
  }));
}

/**
 * The first of `mutes` (lowest id first) that matches a finding whose conversation runs in
 * `project`: the one matching rule of mutes. A null project or model matches only
 * mutes that do not set it.
 */
export function muteMatching(
  mutes: readonly MuteRule[],
  finding: { detector: string; model: string | null },
  project: string | null,
): string | null {
  const mute = mutes.find(
    (m) =>
      (m.detector === null || m.detector === finding.detector) &&
      (m.model === null || (finding.model !== null && m.model === finding.model)) &&
      (m.project === null || (project !== null && m.project === project)),
  );
  return mute ? mute.id : null;
}
