/**
 * The daily partitions of the raw tables (migrations/0010_partitioned_raw_tables.sql): created
 * ahead of time, and dropped whole by retention. Partition `<table>_pYYYYMMDD` holds the rows
 * whose time (Unix ns, UTC) falls on that day; `<table>_default` holds rows of days without one.
 */
import { sql } from 'kysely';
import type { Db } from './db.ts';

/** The partitioned raw tables, each with the column (Unix ns) it is partitioned by. */
export const PARTITIONED_TABLES = [
  ['spans', 'start_ns'],
  ['llm_calls', 'start_ns'],
  ['tool_results', 'at_ns'],
  ['log_records', 'time_ns'],
] as const;

export type PartitionedTable = (typeof PARTITIONED_TABLES)[number][0];

/** How many days ahead partitions exist (a process down for less than this loses nothing to the default partition). */
export const DAYS_AHEAD = 7;

/** Days of the past whose rows are moved out of a default partition into their own partition. */
const PAST_DAYS = 90;

const DAY_MS = 86_400_000;

/** A UTC day as YYYY-MM-DD. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** A DDL step waits at most this long for its lock, so it never queues ingest behind a long query. */
const LOCK_TIMEOUT = '300ms';

export interface Partition {
  table: PartitionedTable;
  name: string;
  /** The UTC day, YYYY-MM-DD. */
  day: string;
}

/** The daily partitions that exist, by table. */
export async function listPartitions(db: Db): Promise<Partition[]> {
  const result = await sql<{ parent: string; name: string }>`
    SELECT p.relname AS parent, c.relname AS name
      FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid
      JOIN pg_class p ON p.oid = i.inhparent
     WHERE p.relname IN (${sql.join(PARTITIONED_TABLES.map(([table]) => table))})
       AND p.relnamespace = current_schema()::regnamespace`.execute(db);
  return result.rows.flatMap((row) => {
    const match = /_p(\d{4})(\d{2})(\d{2})$/.exec(row.name);
    return match
      ? [
          {
            table: row.parent as PartitionedTable,
            name: row.name,
            day: `${match[1]}-${match[2]}-${match[3]}`,
          },
        ]
      : [];
  });
}

/**
 * Creates the partitions of yesterday through `DAYS_AHEAD` days ahead, and of any recent day
 * whose rows sit in a default partition (moving them in). Returns the partitions created.
 */
export async function ensurePartitions(db: Db, now = Date.now()): Promise<string[]> {
  const existing = new Set((await listPartitions(db)).map((p) => `${p.table}:${p.day}`));
  const wanted: Array<[PartitionedTable, string]> = [];
  for (const [table, column] of PARTITIONED_TABLES) {
    const days = new Set<string>();
    for (let d = -1; d <= DAYS_AHEAD; d++) days.add(utcDay(now + d * DAY_MS));
    const stray = await sql<{ day: string }>`
      SELECT DISTINCT to_char(to_timestamp(${sql.ref(column)} / 1e9) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day
        FROM ${sql.table(`${table}_default`)}
       WHERE ${sql.ref(column)} >= ${String(BigInt(now - PAST_DAYS * DAY_MS) * 1_000_000n)}
         AND ${sql.ref(column)} < ${String(BigInt(now + (DAYS_AHEAD + 1) * DAY_MS) * 1_000_000n)}`.execute(
      db,
    );
    for (const row of stray.rows) days.add(row.day);
    for (const day of days) if (!existing.has(`${table}:${day}`)) wanted.push([table, day]);
  }
  const created: string[] = [];
  for (const [table, day] of wanted) {
    // one transaction per partition: its locks are held for one small step only
    const made = await db.transaction().execute(async (trx) => {
      await sql`SET LOCAL lock_timeout = ${sql.lit(LOCK_TIMEOUT)}`.execute(trx);
      const result = await sql<{ made: boolean }>`
        SELECT rotscope_ensure_partition(${table}, ${day}::date) AS made`.execute(trx);
      return result.rows[0]?.made === true;
    });
    if (made) created.push(`${table}_p${day.replaceAll('-', '')}`);
  }
  return created;
}

/**
 * Drops the daily partitions whose whole day is older than `cutoffMs`. Returns the rows each
 * table lost. A partition whose lock is not granted within the lock timeout is left for the
 * next run.
 */
export async function dropPartitionsBefore(
  db: Db,
  cutoffMs: number,
): Promise<{ rows: Record<PartitionedTable, number>; dropped: string[] }> {
  const rows = { spans: 0, llm_calls: 0, tool_results: 0, log_records: 0 };
  const dropped: string[] = [];
  for (const partition of await listPartitions(db)) {
    if (Date.parse(`${partition.day}T00:00:00Z`) + DAY_MS > cutoffMs) continue;
    const count = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM ${sql.table(partition.name)}`.execute(db);
    try {
      await db.transaction().execute(async (trx) => {
        await sql`SET LOCAL lock_timeout = ${sql.lit(LOCK_TIMEOUT)}`.execute(trx);
        await sql`DROP TABLE ${sql.table(partition.name)}`.execute(trx);
      });
    } catch (error) {
      if ((error as { code?: string }).code === '55P03') continue; // lock_not_available
      throw error;
    }
    rows[partition.table] += count.rows[0]?.n ?? 0;
    dropped.push(partition.name);
  }
  return { rows, dropped };
}
