/**
 * The channels attached to a workspace's Context rot alert, each with the minimum severity
 * a finding needs to be sent there (`alert_channels`). The outbox reads the same table.
 */
import { SEVERITY_RANK, type Severity } from '../model/findings.ts';
import { isBigintId } from './channels.ts';
import type { Db } from './db.ts';

export interface AlertChannel {
  id: string;
  minSeverity: Severity;
}

/** The workspace's attached channels, in channel id order. */
export async function getAlertChannels(db: Db, workspaceId: string): Promise<AlertChannel[]> {
  const rows = await db
    .selectFrom('alert_channels')
    .select(['channel_id', 'min_severity'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('channel_id', 'asc')
    .execute();
  return rows.map((row) => ({ id: String(row.channel_id), minSeverity: row.min_severity }));
}

/**
 * Replaces the workspace's attached channels. Refuses (changing nothing) an id that is not
 * a channel of this workspace, an id given twice, or an unknown severity. Runs in a
 * transaction of its own unless `db` already is one.
 */
export async function setAlertChannels(
  db: Db,
  workspaceId: string,
  channels: AlertChannel[],
): Promise<{ ok: true } | { ok: false; error: string }> {
  const seen = new Set<string>();
  for (const channel of channels) {
    if (!isBigintId(channel.id)) return { ok: false, error: `unknown channel id ${channel.id}` };
    if (seen.has(channel.id)) return { ok: false, error: `channel ${channel.id} listed twice` };
    if (!(channel.minSeverity in SEVERITY_RANK)) {
      return {
        ok: false,
        error: `invalid minSeverity ${String(channel.minSeverity)} for channel ${channel.id}`,
      };
    }
    seen.add(channel.id);
  }
  const apply = async (trx: Db): Promise<{ ok: true } | { ok: false; error: string }> => {
    if (channels.length > 0) {
      const known = await trx
        .selectFrom('channels')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .where(
          'id',
          'in',
          channels.map((channel) => channel.id),
        )
        .execute();
      const knownIds = new Set(known.map((row) => String(row.id)));
      const unknown = channels.find((channel) => !knownIds.has(channel.id));
      if (unknown) return { ok: false, error: `unknown channel id ${unknown.id}` };
    }
    await trx.deleteFrom('alert_channels').where('workspace_id', '=', workspaceId).execute();
    if (channels.length > 0) {
      await trx
        .insertInto('alert_channels')
        .values(
          channels.map((channel) => ({
            workspace_id: workspaceId,
            channel_id: channel.id,
            min_severity: channel.minSeverity,
          })),
        )
        .execute();
    }
    return { ok: true };
  };
  return db.isTransaction ? apply(db) : db.transaction().execute(apply);
}
