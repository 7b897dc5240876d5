/** Workspaces and API tokens. Tokens are shown once and stored as sha256 hashes. */
import { createHash, randomBytes } from 'node:crypto';
import { readWindowOverrides, type WindowOverride } from '../model/window-overrides.ts';
import { sql, type Selectable } from 'kysely';
import type { Scope } from '../model/tokens.ts';
import type { Db } from './db.ts';
import type { ApiTokensTable } from './schema.ts';

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

/** Longest token name. */
export const MAX_TOKEN_NAME = 200;

/**
 * Creates a token and returns it; only its hash is stored. `value` (an operator's bootstrap
 * token) replaces the random one; then only its first 4 characters are kept as the prefix.
 * `name` tells the token apart in listings.
 */
export async function createToken(
  db: Db,
  workspaceId: string,
  scope: Scope,
  value?: string,
  name = '',
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
      name,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { token, id: row.id };
}

/** True when the workspace has an admin token that is not revoked. */
export async function hasActiveAdmin(db: Db, workspaceId: string): Promise<boolean> {
  const row = await db
    .selectFrom('api_tokens')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('scope', '=', 'admin')
    .where('revoked_at', 'is', null)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
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

/** A token as listings show it: never the token, only its first characters. */
export interface TokenInfo {
  id: string;
  name: string;
  workspace: string;
  scope: Scope;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}

const TOKEN_COLUMNS = [
  'id',
  'name',
  'workspace_id',
  'scope',
  'prefix',
  'created_at',
  'revoked_at',
] as const;

function toTokenInfo(
  row: Pick<Selectable<ApiTokensTable>, (typeof TOKEN_COLUMNS)[number]>,
): TokenInfo {
  return {
    id: String(row.id),
    name: row.name,
    workspace: row.workspace_id,
    scope: row.scope,
    prefix: row.prefix,
    createdAt: new Date(row.created_at).toISOString(),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at).toISOString(),
  };
}

/**
 * The tokens of a workspace (or of every workspace when `workspaceId` is undefined), newest
 * first; revoked ones only with `includeRevoked`.
 */
export async function listTokens(
  db: Db,
  workspaceId: string | undefined,
  options: { includeRevoked?: boolean } = {},
): Promise<TokenInfo[]> {
  let query = db.selectFrom('api_tokens').select(TOKEN_COLUMNS);
  if (workspaceId !== undefined) query = query.where('workspace_id', '=', workspaceId);
  if (!options.includeRevoked) query = query.where('revoked_at', 'is', null);
  const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  return rows.map(toTokenInfo);
}

/**
 * Revokes a token of the workspace (any workspace when undefined). Returns the token as it is
 * now (revoking twice keeps the first time), or undefined when there is no such token.
 */
export async function revokeToken(
  db: Db,
  workspaceId: string | undefined,
  id: string,
): Promise<TokenInfo | undefined> {
  if (!/^[1-9][0-9]{0,17}$/.test(id)) return undefined;
  let update = db
    .updateTable('api_tokens')
    .set({ revoked_at: sql<Date>`coalesce(revoked_at, now())` })
    .where('id', '=', id);
  if (workspaceId !== undefined) update = update.where('workspace_id', '=', workspaceId);
  const row = await update.returning(TOKEN_COLUMNS).executeTakeFirst();
  return row ? toTokenInfo(row) : undefined;
}
