/** Workspaces and API tokens. Tokens are shown once and stored as sha256 hashes. */
import { createHash, randomBytes } from 'node:crypto';
import { readWindowOverrides, type WindowOverride } from '../model/window-overrides.ts';
import type { Scope } from '../model/tokens.ts';
import type { Db } from './db.ts';

export const TOKEN_PREFIX = 'rs_';

/** A workspace id: lowercase letters, digits, `-` and `_`, at most 63 characters. */
export const WORKSPACE_ID_PATTERN = '^[a-z0-9][a-z0-9_-]{0,62}$';

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface WorkspaceSettings {
  captureContent: boolean;
  windowOverrides: WindowOverride[];
}

/** Creates the workspace when it does not exist yet. */
export async function ensureWorkspace(db: Db, workspaceId: string): Promise<void> {
  await db
    .insertInto('workspaces')
    .values({ id: workspaceId })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/**
 * Creates a token and returns it; only its hash is stored. `value` (an operator's bootstrap
 * token) replaces the random one; then only its first 4 characters are kept as the prefix.
 */
export async function createToken(
  db: Db,
  workspaceId: string,
  scope: Scope,
  value?: string,
): Promise<{ token: string; id: string }> {
  await ensureWorkspace(db, workspaceId);
  const token = value ?? `${TOKEN_PREFIX}${scope}_${randomBytes(24).toString('base64url')}`;
  const row = await db
    .insertInto('api_tokens')
    .values({
      workspace_id: workspaceId,
      scope,
      token_hash: hashToken(token),
      prefix: token.slice(0, value === undefined ? 12 : 4),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { token, id: row.id };
}

export async function findToken(
  db: Db,
  token: string,
): Promise<{ workspaceId: string; scope: Scope } | undefined> {
  const row = await db
    .selectFrom('api_tokens')
    .select(['workspace_id', 'scope'])
    .where('token_hash', '=', hashToken(token))
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row ? { workspaceId: row.workspace_id, scope: row.scope } : undefined;
}

export async function anyTokenExists(db: Db): Promise<boolean> {
  const row = await db
    .selectFrom('api_tokens')
    .select('id')
    .where('revoked_at', 'is', null)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export async function getWorkspaceSettings(
  db: Db,
  workspaceId: string,
): Promise<WorkspaceSettings> {
  const row = await db
    .selectFrom('workspaces')
    .leftJoin('alert_settings', 'alert_settings.workspace_id', 'workspaces.id')
    .select(['workspaces.capture_content', 'alert_settings.window_overrides'])
    .where('workspaces.id', '=', workspaceId)
    .executeTakeFirst();
  return {
    captureContent: row?.capture_content ?? true,
    windowOverrides: readWindowOverrides(row?.window_overrides),
  };
}
