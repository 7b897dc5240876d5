/**
 * Retention (DESIGN §3): raw spans, log records, calls, tool results and compactions older
 * than the configured window are deleted in batches, so a delete never holds long locks.
 * Findings and deliveries are kept: they are the record of what was found.
 */
import { sql } from 'kysely';
import type { Db } from './db.ts';

const BATCH = 5_000;

/** The tables pruned, each with the column that dates its rows. */
const TABLES = [
  ['spans', sql`received_at`],
  ['log_records', sql`received_at`],
  ['llm_calls', sql`created_at`],
  ['compactions', sql`created_at`],
  ['tool_results', sql`to_timestamp(at_ns / 1e9)`],
] as const;

/** Deletes rows older than `days` days; returns how many rows each table lost. */
export async function pruneOlderThan(db: Db, days: number): Promise<Record<string, number>> {
  const deleted: Record<string, number> = {};
  for (const [table, dated] of TABLES) {
    let total = 0;
    for (;;) {
      const result = await sql`DELETE FROM ${sql.table(table)} WHERE ctid IN (
        SELECT ctid FROM ${sql.table(table)} WHERE ${dated} < now() - make_interval(days => ${days}) LIMIT ${BATCH}
      )`.execute(db);
      const n = Number(result.numAffectedRows ?? 0);
      total += n;
      if (n < BATCH) break;
    }
    deleted[table] = total;
  }
  return deleted;
}
