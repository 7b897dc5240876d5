/**
 * Channels of a workspace (webhook, Slack, email). The store keeps what it is given: public
 * configuration in `channels.config`, secrets sealed with the keyring (AES-256-GCM,
 * src/secrets/keyring.ts) in `channels.secrets_sealed` with the id of their key. Validation and
 * the split into the two live in src/notifier/config.ts. Reads return the public part only;
 * {@link getChannelWithSecrets} exists for the notifier and for merges on update. Rows from
 * before sealing (plaintext `channels.secrets`) are still read, and sealed by
 * {@link sealPlaintextSecrets}.
 */
import { sql } from 'kysely';
import type { Db } from './db.ts';
import type { Sealer } from '../model/sealing.ts';

/** A channel as the API shows it: no secrets. */
export interface ChannelRecord {
  id: string;
  type: 'webhook' | 'slack' | 'email';
  name: string;
  config: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

/** A channel with its secrets. Never returned by the API. */
export interface ChannelWithSecrets extends ChannelRecord {
  secrets: Record<string, unknown>;
}

/** Where a page of channels ends: the last item's id. */
export type ChannelKey = readonly [id: string];

export interface ChannelPage {
  items: ChannelRecord[];
  /** Pass as `after` to get the next page; null on the last one. */
  next: ChannelKey | null;
}

const ID_PATTERN = /^[1-9]\d{0,17}$/;

/** Whether a string can be a channel (or finding) id: a positive bigint in decimal. */
export function isBigintId(id: string): boolean {
  return ID_PATTERN.test(id);
}

type ChannelRow = {
  id: string;
  type: ChannelRecord['type'];
  name: string;
  config: unknown;
  created_at: Date | string;
  updated_at: Date | string;
};

function iso(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function toRecord(row: ChannelRow): ChannelRecord {
  return {
    id: String(row.id),
    type: row.type,
    name: row.name,
    config: asObject(row.config),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

const PUBLIC_COLUMNS = ['id', 'type', 'name', 'config', 'created_at', 'updated_at'] as const;

/** The additional data a channel's sealed secrets are bound to: they open in their workspace only. */
function sealContext(workspaceId: string): string {
  return `rotscope channels.secrets ${workspaceId}`;
}

/** The columns that store `secrets` sealed. */
function sealedColumns(keys: Sealer, workspaceId: string, secrets: Record<string, unknown>) {
  const sealed = keys.seal(secrets, sealContext(workspaceId));
  return { secrets: '{}', secrets_sealed: sealed.data, secrets_key_id: sealed.keyId };
}

/** A row's secrets: opened when sealed, as stored when written before sealing existed. */
function secretsOf(
  keys: Sealer,
  workspaceId: string,
  row: { secrets: unknown; secrets_sealed: Buffer | null; secrets_key_id: string | null },
): Record<string, unknown> {
  if (row.secrets_sealed === null || row.secrets_key_id === null) return asObject(row.secrets);
  return asObject(
    keys.open({ keyId: row.secrets_key_id, data: row.secrets_sealed }, sealContext(workspaceId)),
  );
}

/** Creates a channel, its secrets sealed with `keys`, and returns it (without secrets). */
export async function createChannel(
  db: Db,
  keys: Sealer,
  workspaceId: string,
  channel: {
    type: ChannelRecord['type'];
    name: string;
    config: Record<string, unknown>;
    secrets: Record<string, unknown>;
  },
): Promise<ChannelRecord> {
  const row = await db
    .insertInto('channels')
    .values({
      workspace_id: workspaceId,
      type: channel.type,
      name: channel.name,
      config: JSON.stringify(channel.config),
      ...sealedColumns(keys, workspaceId, channel.secrets),
    })
    .returning(PUBLIC_COLUMNS)
    .executeTakeFirstOrThrow();
  return toRecord(row);
}

/** A channel of the workspace, without secrets; undefined when it does not exist there. */
export async function getChannel(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<ChannelRecord | undefined> {
  if (!isBigintId(id)) return undefined;
  const row = await db
    .selectFrom('channels')
    .select(PUBLIC_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toRecord(row) : undefined;
}

/**
 * A channel of the workspace with its secrets (for senders and updates only). Throws
 * UnknownSecretKeyError (src/secrets/keyring.ts) when they were sealed with a key `keys` lacks.
 */
export async function getChannelWithSecrets(
  db: Db,
  keys: Sealer,
  workspaceId: string,
  id: string,
): Promise<ChannelWithSecrets | undefined> {
  if (!isBigintId(id)) return undefined;
  const row = await db
    .selectFrom('channels')
    .select([...PUBLIC_COLUMNS, 'secrets', 'secrets_sealed', 'secrets_key_id'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? { ...toRecord(row), secrets: secretsOf(keys, workspaceId, row) } : undefined;
}

/**
 * The workspace's channels in id order, `limit` per page (1..200, default 50). `after` is
 * the `next` of the previous page.
 */
export async function listChannels(
  db: Db,
  workspaceId: string,
  options: { after?: ChannelKey | undefined; limit?: number | undefined } = {},
): Promise<ChannelPage> {
  const limit = Math.min(Math.max(options.limit ?? 50, 1), 200);
  let query = db
    .selectFrom('channels')
    .select(PUBLIC_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .orderBy('id', 'asc')
    .limit(limit + 1);
  if (options.after !== undefined) query = query.where('id', '>', options.after[0]);
  const rows = await query.execute();
  const items = rows.slice(0, limit).map(toRecord);
  const last = items.at(-1);
  return { items, next: rows.length > limit && last ? [last.id] : null };
}

/**
 * Updates a channel's name, configuration and/or secrets (each replaced as a whole when
 * given; secrets sealed with `keys`). Returns the updated channel, or undefined when it does not exist in the workspace.
 */
export async function updateChannel(
  db: Db,
  keys: Sealer,
  workspaceId: string,
  id: string,
  patch: { name?: string; config?: Record<string, unknown>; secrets?: Record<string, unknown> },
): Promise<ChannelRecord | undefined> {
  if (!isBigintId(id)) return undefined;
  const row = await db
    .updateTable('channels')
    .set({
      updated_at: new Date(),
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.config !== undefined ? { config: JSON.stringify(patch.config) } : {}),
      ...(patch.secrets !== undefined ? sealedColumns(keys, workspaceId, patch.secrets) : {}),
    })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returning(PUBLIC_COLUMNS)
    .executeTakeFirst();
  return row ? toRecord(row) : undefined;
}

/**
 * Deletes a channel; its alert attachment and its deliveries (with their attempt log) go
 * with it. Returns false when it did not exist in the workspace.
 */
export async function deleteChannel(db: Db, workspaceId: string, id: string): Promise<boolean> {
  if (!isBigintId(id)) return false;
  const result = await db
    .deleteFrom('channels')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** How the workspaces' channel secrets are stored: rows per key id, and rows in plaintext. */
export interface SecretsCensus {
  plaintext: number;
  byKey: Record<string, number>;
}

/** Counts channel rows per sealing key (all workspaces). */
export async function secretsCensus(db: Db, workspaceId?: string): Promise<SecretsCensus> {
  let query = db
    .selectFrom('channels')
    .select(['secrets_key_id', sql<string>`count(*)`.as('n')])
    .groupBy('secrets_key_id');
  if (workspaceId !== undefined) query = query.where('workspace_id', '=', workspaceId);
  const rows = await query.execute();
  const census: SecretsCensus = { plaintext: 0, byKey: {} };
  for (const row of rows) {
    if (row.secrets_key_id === null) census.plaintext = Number(row.n);
    else census.byKey[row.secrets_key_id] = Number(row.n);
  }
  return census;
}

/**
 * Seals (with the current key) every channel's secrets that are in plaintext or sealed with
 * another key, 100 rows per transaction, in all workspaces. Rows sealed with a key the ring
 * lacks are left as they are and counted in `unknownKeys`. Safe to run while servers run and
 * to run again.
 */
export async function resealChannelSecrets(
  db: Db,
  keys: Sealer,
): Promise<{ sealed: number; resealed: number; unknownKeys: Record<string, number> }> {
  const current = keys.current.id;
  const result = { sealed: 0, resealed: 0, unknownKeys: {} as Record<string, number> };
  const skipped = new Set<string>();
  for (;;) {
    const done = await db.transaction().execute(async (trx) => {
      let query = trx
        .selectFrom('channels')
        .select(['id', 'workspace_id', 'secrets', 'secrets_sealed', 'secrets_key_id'])
        .where((eb) =>
          eb.or([eb('secrets_key_id', 'is', null), eb('secrets_key_id', '!=', current)]),
        )
        .orderBy('id')
        .limit(100)
        .forUpdate();
      if (skipped.size > 0) query = query.where('id', 'not in', [...skipped]);
      const rows = await query.execute();
      for (const row of rows) {
        if (row.secrets_key_id !== null && !keys.has(row.secrets_key_id)) {
          skipped.add(String(row.id));
          result.unknownKeys[row.secrets_key_id] =
            (result.unknownKeys[row.secrets_key_id] ?? 0) + 1;
          continue;
        }
        const secrets = secretsOf(keys, row.workspace_id, row);
        await trx
          .updateTable('channels')
          .set(sealedColumns(keys, row.workspace_id, secrets))
          .where('id', '=', row.id)
          .execute();
        if (row.secrets_key_id === null) result.sealed++;
        else result.resealed++;
      }
      return rows.length < 100;
    });
    if (done) return result;
  }
}
