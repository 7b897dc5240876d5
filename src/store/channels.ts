/**
 * Channels of a workspace (webhook, Slack, email). The store keeps what it is given: public
 * configuration in `channels.config`, secrets in `channels.secrets`. Validation and the
 * split into the two live in src/notifier/config.ts. Reads return the public part only;
 * {@link getChannelWithSecrets} exists for the notifier and for merges on update.
 */
import type { Db } from './db.ts';

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

/** Creates a channel and returns it (without secrets). */
export async function createChannel(
  db: Db,
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
      secrets: JSON.stringify(channel.secrets),
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

/** A channel of the workspace with its secrets (for senders and updates only). */
export async function getChannelWithSecrets(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<ChannelWithSecrets | undefined> {
  if (!isBigintId(id)) return undefined;
  const row = await db
    .selectFrom('channels')
    .select([...PUBLIC_COLUMNS, 'secrets'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? { ...toRecord(row), secrets: asObject(row.secrets) } : undefined;
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
 * given). Returns the updated channel, or undefined when it does not exist in the workspace.
 */
export async function updateChannel(
  db: Db,
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
      ...(patch.secrets !== undefined ? { secrets: JSON.stringify(patch.secrets) } : {}),
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
