/**
 * A fresh, migrated store per test file: a new database on the machine's PostgreSQL when
 * DATABASE_URL is set (the CI run does both), else an in-memory PGlite.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openStore, type Store } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';

export interface TestStore extends Store {
  /** The URL of the fresh database (postgres only), for servers started in child processes. */
  url: string | undefined;
}

export const usingPostgres = Boolean(process.env.DATABASE_URL);

/** Creates an empty database (postgres) and returns its URL; undefined on PGlite. */
export async function createTestDatabase(): Promise<string | undefined> {
  const base = process.env.DATABASE_URL;
  if (!base) return undefined;
  const name = `rotscope_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
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

export async function createTestStore(): Promise<TestStore> {
  const url = await createTestDatabase();
  const store = await openStore({ databaseUrl: url, dataDir: 'memory://' });
  await migrate(store.db);
  return {
    ...store,
    url,
    async close() {
      await store.close();
      if (url) await dropTestDatabase(url);
    },
  };
}
