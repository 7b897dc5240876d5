/**
 * One database connection lent outside kysely's pool, for the ingest path's bulk writes: plain
 * queries, `COPY … FROM STDIN` (PostgreSQL in one write, ./copy-in.ts; PGlite through its
 * `/dev/blob` device), and a kysely instance bound to the same connection so the rest of a
 * transaction runs the usual queries on it.
 */
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import type { Database } from './schema.ts';

export interface RawConnection {
  /** The database session behind it (the same object each time that session is lent). */
  readonly session: object;
  query(text: string, params?: readonly unknown[]): Promise<{ rows: unknown[] }>;
  /** Runs a `COPY … FROM STDIN` statement with `data` as its input. */
  copyIn(text: string, data: Buffer): Promise<void>;
  /** Returns the connection; with an error (a dead connection) the pool discards it. */
  release(error?: Error): void;
}

/** A kysely bound to one connection (no pool of its own; releasing is the lender's job). */
export function kyselyOn(connection: RawConnection): Kysely<Database> {
  const client = {
    query: (text: string, params: readonly unknown[]) => connection.query(text, params ?? []),
    release: () => {},
  };
  const pool = { connect: async () => client, end: async () => {} };
  return new Kysely<Database>({
    dialect: new PostgresDialect({ pool: pool as unknown as pg.Pool }),
  });
}
