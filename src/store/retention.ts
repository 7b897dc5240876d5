/**
 * Retention (DESIGN §3): raw data older than the configured window is removed, findings and
 * deliveries are kept (they are the record of what was found). Every raw row is aged by its own
 * time, the time its table is partitioned by (spans and calls by their start, tool results by
 * theirs, log records by theirs, compactions by theirs), in whole UTC days: so whatever is
 * removed of a session is removed together, never its tool results without its calls (an
 * imported June transcript lands in the default partitions; they were aged by arrival for calls
 * and by their own time for tool results, and lost half of it at the next run).
 *
 * The partitioned raw tables (src/store/partitions.ts) lose whole daily partitions: a
 * `DROP TABLE` of a million rows takes milliseconds and leaves no dead rows behind. What sits in
 * their default partitions (days without a partition: the far past of an import, or a wrong
 * clock) and the compactions are deleted in batches by the same rule; rows dated beyond the
 * partitions kept ahead (a clock in the future) go by their arrival instead, or they would never
 * go.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from './db.ts';
import { DAYS_AHEAD, dropPartitionsBefore, ensurePartitions } from './partitions.ts';

const BATCH = 5_000;
const DAY_MS = 86_400_000;

/** Tables pruned row by row: the column that dates their rows (Unix ns) and their arrival. */
const ROW_PRUNED: ReadonlyArray<readonly [table: string, time: string, arrival: string]> = [
  ['spans_default', 'start_ns', 'received_at'],
  ['log_records_default', 'time_ns', 'received_at'],
  ['llm_calls_default', 'start_ns', 'created_at'],
  ['tool_results_default', 'at_ns', 'received_at'],
  ['compactions', 'at_ns', 'created_at'],
];

/** The first millisecond of the UTC day of `ms`. */
const dayStart = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

const ns = (ms: number) => String(BigInt(ms) * 1_000_000n);

/**
 * The cutoff of a retention window: rows whose own time is before the start of this UTC day
 * go (the day partitions before it are dropped whole, so rows of the default partitions and the
 * compactions go by the same day).
 */
export function retentionCutoffMs(days: number, now = Date.now()): number {
  return dayStart(now - days * DAY_MS);
}

/** Removes raw data older than `days` days; returns how many rows each table lost. */
export async function pruneOlderThan(
  db: Db,
  days: number,
  now = Date.now(),
): Promise<Record<string, number>> {
  const cutoff = retentionCutoffMs(days, now);
  const { rows } = await dropPartitionsBefore(db, cutoff);
  const deleted: Record<string, number> = { ...rows, compactions: 0 };
  const future = ns(dayStart(now) + (DAYS_AHEAD + 1) * DAY_MS);
  for (const [table, time, arrival] of ROW_PRUNED) {
    const name = table.replace(/_default$/, '');
    const old: RawBuilder<boolean> = sql`(${sql.ref(time)} < ${ns(cutoff)} OR (${sql.ref(time)} >= ${future}
      AND ${sql.ref(arrival)} < ${new Date(now - days * DAY_MS)}))`;
    for (;;) {
      const result = await sql`DELETE FROM ${sql.table(table)} WHERE ctid IN (
        SELECT ctid FROM ${sql.table(table)} WHERE ${old} LIMIT ${BATCH}
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
