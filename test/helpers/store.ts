/**
 * A fresh, migrated store per test file: a new database on the machine's PostgreSQL when
 * DATABASE_URL is set (the CI run does both), else an in-memory PGlite.
 *
 * Migrating is done once per run, in the global setup (test/helpers/global-setup.ts): on
 * PostgreSQL each store is a `CREATE DATABASE … TEMPLATE` copy of a migrated template database,
 * on PGlite an in-memory PGlite loaded from a dump of a migrated one. Copying is 2–3× faster
 * than migrating (test/helpers/measure-store-setup.ts). Outside a vitest run with that setup
 * (nothing provided), each store is migrated as before.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { inject } from 'vitest';
import { testRunPid } from './test-run.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated template database on DATABASE_URL's server (PostgreSQL runs). */
    templateDatabase: string | undefined;
    /** A file holding the data directory of a migrated PGlite, uncompressed tar (PGlite runs). */
    pgliteDump: string | undefined;
    /** A migrated embedded data directory on disk, for child processes (test/helpers/data-dir.ts). */
    pgliteDataDir: string | undefined;
  }
}

export interface TestStore extends Store {
  /** The URL of the fresh database (postgres only), for servers started in child processes. */
  url: string | undefined;
}

export const usingPostgres = Boolean(process.env.DATABASE_URL);

/** Prefix of the per-file databases; the global setup's teardown drops leftovers. */
export const TEST_DATABASE_PREFIX = 'rotscope_test_';

/** A value the global setup provided, or undefined outside vitest or without that setup. */
export function provided(
  key: 'templateDatabase' | 'pgliteDump' | 'pgliteDataDir',
): string | undefined {
  try {
    return inject(key);
  } catch {
    return undefined;
  }
}

/**
 * Creates a database (postgres) and returns its URL; undefined on PGlite. Empty unless
 * `template` names a database to copy.
 */
export async function createTestDatabase(template?: string): Promise<string | undefined> {
  const base = process.env.DATABASE_URL;
  if (!base) return undefined;
  const name = `${TEST_DATABASE_PREFIX}${testRunPid()}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(
      template ? `CREATE DATABASE ${name} TEMPLATE "${template}"` : `CREATE DATABASE ${name}`,
    );
  } finally {
    await admin.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropTestDatabase(url: string): Promise<void> {
  const base = process.env.DATABASE_URL;
  if (!base) return;
  const name = new URL(url).pathname.slice(1);
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** int8 read as a decimal string, as src/store/db.ts opens PGlite. */
const INT8_OID = 20;

/** An in-memory PGlite loaded from the migrated dump, when the global setup made one. */
async function loadMigratedPglite(): Promise<PGlite | undefined> {
  const dump = provided('pgliteDump');
  if (!dump) return undefined;
  return PGlite.create('memory://', {
    loadDataDir: new Blob([await readFile(dump)]),
    parsers: { [INT8_OID]: (value: string) => value },
  });
}

export async function createTestStore(): Promise<TestStore> {
  const template = usingPostgres ? provided('templateDatabase') : undefined;
  const url = await createTestDatabase(template);
  const pglite = url ? undefined : await loadMigratedPglite();
  const store = await openStore({
    databaseUrl: url,
    dataDir: 'memory://',
    ...(pglite ? { pglite } : {}),
  });
  if (!template && !pglite) await migrate(store.db);
  return {
    ...store,
    url,
    async close() {
      await store.close();
      if (url) await dropTestDatabase(url);
    },
  };
}
