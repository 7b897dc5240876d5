/**
 * The outbox. Deliveries are written in the same transaction as the finding they announce
 * (pass the transaction as `db`), one per channel attached to the workspace's alert whose
 * minimum severity the finding reaches.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Severity } from '../model/findings.ts';
import type { Db } from './db.ts';

export type DeliveryEvent = 'created' | 'escalated';

const severityRankSql = (column: string) =>
  sql<number>`CASE ${sql.ref(column)} WHEN 'info' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END`;

const SEVERITY_RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2 };

/**
 * Queues one delivery per attached channel for a finding event. Idempotent: an event already
 * queued for a channel is not queued again. Returns the number of rows queued.
 */
export async function enqueueDeliveries(
  db: Db,
  event: { workspaceId: string; findingId: string; severity: Severity; event: DeliveryEvent },
): Promise<number> {
  const channels = await db
    .selectFrom('alert_channels')
    .select('channel_id')
    .where('workspace_id', '=', event.workspaceId)
    .where(severityRankSql('min_severity'), '<=', SEVERITY_RANK[event.severity])
    .execute();
  if (channels.length === 0) return 0;
  const result = await db
    .insertInto('deliveries')
    .values(
      channels.map((channel) => ({
        id: `msg_${randomUUID().replaceAll('-', '')}`,
        workspace_id: event.workspaceId,
        finding_id: event.findingId,
        channel_id: channel.channel_id,
        event: event.event,
      })),
    )
    .onConflict((oc) => oc.columns(['finding_id', 'channel_id', 'event']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0);
}
