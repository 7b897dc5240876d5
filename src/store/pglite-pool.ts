/**
 * A `pg.Pool`-shaped adapter over one PGlite instance, so kysely's own PostgresDialect runs
 * unchanged on the embedded database. PGlite is a single connection: `connect()` hands it to
 * one caller at a time (a FIFO mutex), which keeps kysely transactions from interleaving.
 */
import type { PGlite } from '@electric-sql/pglite';

interface PgLikeResult {
  command: string;
  rowCount: number;
  rows: unknown[];
}

export interface PgLikeClient {
  query(sql: string, params: readonly unknown[]): Promise<PgLikeResult>;
  release(): void;
}

/**
 * The most parameters PGlite binds in one statement. Beyond it (a signed 16-bit count) PGlite
 * does not refuse the statement: the insert appears to succeed and every later query on the
 * connection answers no rows (seen with 1,000 rows of 33 columns). PostgreSQL itself takes
 * 65,535. Refused here, before anything is sent, so the connection stays usable.
 */
export const MAX_PGLITE_PARAMETERS = 32_767;

/** A statement with more parameters than PGlite binds: send it in smaller batches. */
export class TooManyParametersError extends Error {
  constructor(readonly count: number) {
    super(
      `a statement with ${count} parameters: PGlite binds at most ${MAX_PGLITE_PARAMETERS}; send it in smaller batches`,
    );
    this.name = 'TooManyParametersError';
  }
}

export class PGlitePool {
  readonly #db: PGlite;
  #queue: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(db: PGlite) {
    this.#db = db;
  }

  /** Waits for the connection, then lends it until `release()`. */
  async connect(): Promise<PgLikeClient> {
    if (this.#closed) throw new Error('PGlite pool is closed');
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const ready = this.#queue;
    this.#queue = ready.then(() => released);
    await ready;
    const db = this.#db;
    let done = false;
    return {
      async query(sql, params) {
        if (params.length > MAX_PGLITE_PARAMETERS) throw new TooManyParametersError(params.length);
        // Without parameters use the simple protocol, which also runs multi-statement
        // scripts (migrations); with parameters, the extended protocol.
        const result =
          params.length === 0
            ? ((await db.exec(sql)).at(-1) ?? { rows: [], affectedRows: 0 })
            : await db.query(sql, [...params]);
        const command = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? '';
        return {
          command,
          rowCount: result.affectedRows ?? result.rows.length,
          rows: result.rows,
        };
      },
      release() {
        if (done) return;
        done = true;
        release();
      },
    };
  }

  async end(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#queue;
    await this.#db.close();
  }
}
