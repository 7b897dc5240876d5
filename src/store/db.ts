/**
 * Opens the store: PostgreSQL through `pg` when a URL is given, else the embedded PGlite in
 * a data directory. Both run the same migrations and the same kysely queries.
 */
import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { copyIn } from './copy-in.ts';
import { acquireDataDirLock } from './data-dir-lock.ts';
import { PGlitePool } from './pglite-pool.ts';
import { preparingQueries } from './prepared.ts';
import type { RawConnection } from './raw-connection.ts';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;

export interface StoreOptions {
  /** postgres:// URL; when absent the embedded database in `dataDir` is used. */
  databaseUrl?: string | undefined;
  /** Directory of the embedded database. `memory://` keeps it in memory (tests). */
  dataDir: string;
  /** Maximum pool size for PostgreSQL. Default 10. */
  poolSize?: number;
  /** An already open PGlite to use instead of opening `dataDir` (benchmarks, tools). */
  pglite?: PGlite;
}

export interface Store {
  db: Db;
  kind: 'postgres' | 'pglite';
  /** Where the data lives, for logs (the URL without its password, or the directory). */
  location: string;
  close(): Promise<void>;
  /**
   * Records a listening server's URL in the embedded data directory's lock, so CLI commands
   * that find the directory held can go through the server. Absent on PostgreSQL.
   */
  advertise?(url: string): void;
  /** A connection of its own with COPY FROM STDIN, for the ingest path's bulk writes. */
  connect(): Promise<RawConnection>;
}

const INT8_OID = 20;

/** int8 values (nanosecond times, ids, counts) are read as decimal strings on both backends. */
const readInt8AsString = (value: string): string => value;

export async function openStore(options: StoreOptions): Promise<Store> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 5_000,
      // Names the sessions in pg_stat_activity unless the URL or PGAPPNAME names them.
      fallback_application_name: 'rotscope',
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === INT8_OID
            ? readInt8AsString
            : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    });
    ignoreConnectionErrors(pool);
    pool.on('connect', preparingQueries);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return {
      db,
      kind: 'postgres',
      location: redactUrl(options.databaseUrl),
      close: () => db.destroy(),
      async connect() {
        const client = await pool.connect();
        return {
          session: client,
          query: (text, params = []) => client.query(text, [...params]),
          copyIn: (text, data) => copyIn(client, text, data),
          release: (error) => client.release(error),
        };
      },
    };
  }
  const inMemory = options.dataDir.startsWith('memory://');
  if (!inMemory && !options.pglite) mkdirSync(options.dataDir, { recursive: true });
  // PGlite is single-process: hold the directory (throws DataDirLockedError naming the holder).
  const lock = inMemory || options.pglite ? undefined : acquireDataDirLock(options.dataDir);
  let lite: PGlite;
  try {
    lite =
      options.pglite ??
      // 'memory://' (not undefined): PGlite ignores the options argument when the first is undefined.
      (await PGlite.create(inMemory ? 'memory://' : options.dataDir, {
        parsers: { [INT8_OID]: readInt8AsString },
      }));
  } catch (error) {
    lock?.release();
    throw error;
  }
  const pool = new PGlitePool(lite);
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: pool as unknown as pg.Pool }),
  });
  return {
    db,
    kind: 'pglite',
    location: options.dataDir,
    close: () => db.destroy().finally(() => lock?.release()),
    advertise: (url) => lock?.advertise(url),
    async connect() {
      const client = await pool.connect();
      return {
        session: lite,
        query: (text, params = []) => client.query(text, params),
        // PGlite reads COPY input from its /dev/blob device.
        copyIn: async (text, data) => {
          await lite.query(text.replace(/\bSTDIN\b/, "'/dev/blob'"), [], {
            blob: new Blob([data]),
          });
        },
        release: () => client.release(),
      };
    },
  };
}

/**
 * A connection that dies (server restart, `pg_terminate_backend`: FATAL 57P01) emits 'error' on
 * its client, and an 'error' event without a listener ends the process. pg-pool listens only
 * while the client is idle (and re-emits it on the pool); a client checked out by a query or
 * transaction has no listener of its own. The error is not lost by ignoring the event: pg also
 * rejects the query in progress with it, and any later query on that client with "Client has
 * encountered a connection error"; the pool discards the client on release. Those rejections
 * reach the caller, which answers 503 or backs off (connection-errors.ts).
 */
function ignoreConnectionErrors(pool: pg.Pool): void {
  pool.on('error', () => {}); // an idle client lost its server; the pool has already dropped it
  pool.on('connect', (client) => client.on('error', () => {})); // a checked-out client did
}

export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<unparsable DATABASE_URL>';
  }
}
