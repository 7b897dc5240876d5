/**
 * The per-workspace Context rot alert (`alert_settings`): enabled, thresholds, window
 * overrides. A workspace without a row has the defaults (enabled, DEFAULT_THRESHOLDS, no
 * overrides). Stored thresholds may be partial; reads merge them over the defaults.
 * Validation is the caller's (the API); this module stores what it is given.
 */
import { sql } from 'kysely';
import { DEFAULT_THRESHOLDS, type Thresholds } from '../model/findings.ts';
import { readWindowOverrides, type WindowOverride } from '../model/window-overrides.ts';
import type { Db } from './db.ts';
import { PREPARED } from './prepared.ts';

export interface AlertSettings {
  enabled: boolean;
  thresholds: Thresholds;
  windowOverrides: WindowOverride[];
  /** When the settings were last changed; null while they are the defaults. */
  updatedAt: string | null;
}

/** The settings of a workspace that never changed them. */
export function defaultAlertSettings(): AlertSettings {
  return {
    enabled: true,
    thresholds: { ...DEFAULT_THRESHOLDS },
    windowOverrides: [],
    updatedAt: null,
  };
}

const THRESHOLD_KEYS = Object.keys(DEFAULT_THRESHOLDS) as (keyof Thresholds)[];

/** Merges stored (possibly partial or stale) thresholds over the defaults, keeping only numbers. */
function mergeThresholds(stored: unknown): Thresholds {
  const merged: Thresholds = { ...DEFAULT_THRESHOLDS };
  if (typeof stored !== 'object' || stored === null) return merged;
  for (const key of THRESHOLD_KEYS) {
    const value = (stored as Record<string, unknown>)[key];
    if (typeof value === 'number' && Number.isFinite(value)) merged[key] = value;
  }
  return merged;
}

/** The Context rot alert settings of a workspace (the defaults when never set). */
export async function getAlertSettings(db: Db, workspaceId: string): Promise<AlertSettings> {
  const row = await db
    .selectFrom('alert_settings')
    .select(['enabled', 'thresholds', 'window_overrides', 'updated_at'])
    .where('workspace_id', '=', workspaceId)
    // every evaluator batch reads them: planned once per connection
    .modifyEnd(PREPARED)
    .executeTakeFirst();
  if (!row) return defaultAlertSettings();
  return {
    enabled: row.enabled,
    thresholds: mergeThresholds(row.thresholds),
    windowOverrides: readWindowOverrides(row.window_overrides),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** Replaces a workspace's settings (validated by the caller) and returns them as stored. */
export async function putAlertSettings(
  db: Db,
  workspaceId: string,
  settings: Omit<AlertSettings, 'updatedAt'>,
): Promise<AlertSettings> {
  const values = {
    enabled: settings.enabled,
    thresholds: JSON.stringify(settings.thresholds),
    window_overrides: JSON.stringify(settings.windowOverrides),
  };
  const row = await db
    .insertInto('alert_settings')
    .values({ workspace_id: workspaceId, ...values })
    .onConflict((oc) =>
      oc.column('workspace_id').doUpdateSet({ ...values, updated_at: sql<Date>`now()` }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
  return {
    enabled: row.enabled,
    thresholds: mergeThresholds(row.thresholds),
    windowOverrides: readWindowOverrides(row.window_overrides),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** Locks a workspace's settings row for a read-modify-write (creates it with defaults first). */
export async function lockAlertSettings(db: Db, workspaceId: string): Promise<AlertSettings> {
  await db
    .insertInto('alert_settings')
    .values({ workspace_id: workspaceId })
    .onConflict((oc) => oc.column('workspace_id').doNothing())
    .execute();
  await db
    .selectFrom('alert_settings')
    .select('workspace_id')
    .where('workspace_id', '=', workspaceId)
    .forUpdate()
    .execute();
  return getAlertSettings(db, workspaceId);
}
