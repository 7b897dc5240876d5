/**
 * Retention (DESIGN §3): raw data older than the configured window is removed, findings and
 * deliveries are kept (they are the record of what was found). The partitioned raw tables
 * (src/store/partitions.ts) lose whole daily partitions, by the rows' own time: a `DROP TABLE`
 * of a million rows takes milliseconds and leaves no dead rows behind. What sits in their
 * default partitions (days without a partition) and the compactions are deleted in batches by
 * arrival time, so a delete never holds long locks.
 */
import { sql } from 'kysely';
import type { Db } from './db.ts';
import { dropPartitionsBefore, ensurePartitions } from './partitions.ts';

const BATCH = 5_000;
const DAY_MS = 86_400_000;

/** Tables pruned row by row, each with the column that dates its rows. */
const ROW_PRUNED = [
  ['spans_default', sql`received_at`],
  ['log_records_default', sql`received_at`],
  ['llm_calls_default', sql`created_at`],
  ['tool_results_default', sql`to_timestamp(at_ns / 1e9)`],
  ['compactions', sql`created_at`],
] as const;

/** Removes raw data older than `days` days; returns how many rows each table lost. */
export async function pruneOlderThan(
  db: Db,
  days: number,
  now = Date.now(),
): Promise<Record<string, number>> {
  const { rows } = await dropPartitionsBefore(db, now - days * DAY_MS);
  const deleted: Record<string, number> = { ...rows, compactions: 0 };
  for (const [table, dated] of ROW_PRUNED) {
    const name = table.replace(/_default$/, '');
    for (;;) {
      const result = await sql`DELETE FROM ${sql.table(table)} WHERE ctid IN (
        SELECT ctid FROM ${sql.table(table)} WHERE ${dated} < ${new Date(now - days * DAY_MS)} LIMIT ${BATCH}
      )`.execute(db);
      const n = Number(result.numAffectedRows ?? 0);
      deleted[name] = (deleted[name] ?? 0) + n;
      if (n < BATCH) break;
    }
  }
  return deleted;
}

/**
 * The hourly upkeep of the raw tables: partitions ahead of time always, pruning when a
 * retention window is set (0 keeps everything).
 */
export async function maintainRawTables(
  db: Db,
  retentionDays: number,
): Promise<{ created: string[]; deleted: Record<string, number> }> {
  const created = await ensurePartitions(db);
  const deleted = retentionDays > 0 ? await pruneOlderThan(db, retentionDays) : {};
  return { created, deleted };
}
