/**
 * Bulk inserts for the ingest path. Rows are sent with one binary `COPY` straight into the
 * table: almost every batch is new, and then that is all the database does. When a row's key
 * exists already (an exporter re-sent the batch), the COPY fails with unique_violation; the
 * caller rolls its job back to the job's savepoint and runs it again with `resent` set
 * (src/receiver/group-commit.ts), and then the rows go through a temporary staging table, one
 * binary `COPY` into it and one `INSERT … SELECT … ON CONFLICT DO NOTHING` out of it, which
 * skips the re-sent rows by the natural key and says which rows are new. The
 * staging tables are created once per database session (`LIKE` the target, emptied as they
 * are read and at commit); the binary type of each column is read from the catalog then, so
 * a migration that widens a column changes what is sent without a code change.
 */
import { sql } from 'kysely';
import type { ConversationNotes } from './conversation-notes.ts';
import { Slices } from '../model/slices.ts';
import { CopyWriter, type CopyType } from './copy-binary.ts';
import type { Db } from './db.ts';
import type { RawConnection } from './raw-connection.ts';

/** The tables written through staging. */
const STAGED = ['spans', 'llm_calls', 'tool_results'] as const;
export type StagedTable = (typeof STAGED)[number];

const COPY_TYPES: Record<string, CopyType> = {
  text: 'text',
  'character varying': 'text',
  smallint: 'int2',
  integer: 'int4',
  bigint: 'int8',
  'double precision': 'float8',
  boolean: 'bool',
  jsonb: 'jsonb',
};

/** The column types of the staged tables in one session. */
export type Staging = ReadonlyMap<StagedTable, ReadonlyMap<string, CopyType>>;

const sessions = new WeakMap<object, Staging>();

/**
 * Creates the session's staging tables the first time it is used (outside any transaction,
 * so a rolled-back transaction cannot take them away) and returns their column types.
 */
export async function prepareStaging(connection: RawConnection): Promise<Staging> {
  const known = sessions.get(connection.session);
  if (known) return known;
  const staging = new Map<StagedTable, Map<string, CopyType>>();
  for (const table of STAGED) {
    await connection.query(
      `CREATE TEMP TABLE IF NOT EXISTS stage_${table} (LIKE ${table} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS`,
    );
    const { rows } = await connection.query(
      `SELECT attname AS name, format_type(atttypid, NULL) AS type FROM pg_attribute
        WHERE attrelid = 'pg_temp.stage_${table}'::regclass AND attnum > 0 AND NOT attisdropped`,
    );
    const types = new Map<string, CopyType>();
    for (const row of rows as Array<{ name: string; type: string }>) {
      const copyType = COPY_TYPES[row.type];
      if (copyType) types.set(row.name, copyType);
    }
    staging.set(table, types);
  }
  sessions.set(connection.session, staging);
  return staging;
}

/** A transaction of the ingest path: kysely on its connection, COPY into it, its staging. */
export interface IngestTx {
  db: Db;
  copyIn(text: string, data: Buffer): Promise<void>;
  staging: Staging;
  /**
   * Some rows of this job may exist already (its first run hit unique_violation): insert
   * through staging, skipping them. False on a first run: straight COPY, which throws
   * unique_violation if any row exists.
   */
  resent: boolean;
  /**
   * What the job tells its conversations: written once for the whole transaction, in one
   * order, just before COMMIT (./conversation-notes.ts), never by the job itself.
   */
  conversations: ConversationNotes;
}

/** The SQLSTATE a straight COPY of rows that exist already fails with. */
export const UNIQUE_VIOLATION = '23505';

/** What an insert reports of each new row: SQL for the staged path, the same from a row. */
export interface Returning<R> {
  sql: string;
  fromRow(row: Record<string, unknown>): R;
}

/**
 * Inserts rows (objects keyed by column name) into `table`, skipping those whose `conflict`
 * key exists, and returns what `returning` says of the rows inserted. Column names are
 * constants of the callers, never input.
 */
export async function insertStaged<R>(
  tx: IngestTx,
  table: StagedTable,
  columns: readonly string[],
  rows: ReadonlyArray<Record<string, unknown>>,
  conflict: string,
  returning?: Returning<R>,
): Promise<R[]> {
  if (rows.length === 0) return [];
  const types = tx.staging.get(table)!;
  const writer = new CopyWriter(
    columns.map((column) => {
      const type = types.get(column);
      if (!type) throw new Error(`${table}.${column} has no binary COPY encoder`);
      return type;
    }),
  );
  // in slices that give the event loop back: 100,000 rows take hundreds of ms to encode
  const slices = new Slices();
  for (const row of rows) {
    writer.row(columns.map((column) => row[column]));
    if (slices.spent()) await slices.next();
  }
  const data = writer.finish();
  const names = columns.join(', ');
  if (!tx.resent) {
    // Straight into the table: new rows (nearly every batch) cost one COPY.
    await tx.copyIn(`COPY ${table} (${names}) FROM STDIN (FORMAT binary)`, data);
    return returning ? rows.map((row) => returning.fromRow(row)) : [];
  }
  // Some rows exist (a re-sent batch): through staging, skipping them by the natural key.
  await tx.copyIn(`COPY stage_${table} (${names}) FROM STDIN (FORMAT binary)`, data);
  const result =
    await sql<R>`${sql.raw(`WITH staged AS (DELETE FROM stage_${table} RETURNING ${names})
    INSERT INTO ${table} (${names}) SELECT ${names} FROM staged
    ON CONFLICT (${conflict}) DO NOTHING`)}
    ${returning ? sql.raw(`RETURNING ${returning.sql}`) : sql``}`.execute(tx.db);
  return result.rows;
}
