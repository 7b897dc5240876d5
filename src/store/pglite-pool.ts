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
