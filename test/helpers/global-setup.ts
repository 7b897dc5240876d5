/**
 * Vitest global setup. Migrates once per run and provides the result to test/helpers/store.ts:
 * on PostgreSQL (DATABASE_URL) a template database each test file's database is copied from;
 * on PGlite a dump of a migrated in-memory PGlite each store is loaded from. After the run it
 * drops the template and the per-file databases (`rotscope_test_*`) nothing is connected to any
 * more, so repeated CI runs do not pile them up.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openStore } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { childrenFromSource } from '../../scripts/source-hash.mjs';
import { testRunPid } from './test-run.ts';

const ROOT = path.join(import.meta.dirname, '../..');

const TEMPLATE_PREFIX = 'rotscope_template_';

async function withAdmin<T>(url: string, run: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    return await run(admin);
  } finally {
    await admin.end().catch(() => {});
  }
}

/** Creates and migrates the template database; returns its name. */
async function createTemplate(base: string): Promise<string> {
  const name = `${TEMPLATE_PREFIX}${testRunPid()}_${randomBytes(6).toString('hex')}`;
  await withAdmin(base, (admin) => admin.query(`CREATE DATABASE ${name}`));
  const url = new URL(base);
  url.pathname = `/${name}`;
  // closed before any copy: CREATE DATABASE … TEMPLATE refuses a template with sessions
  const store = await openStore({ databaseUrl: url.toString(), dataDir: 'memory://' });
  try {
    await migrate(store.db);
  } finally {
    await store.close();
  }
  return name;
}

/**
 * A migrated embedded data directory on disk (as `rotscope serve` makes it on first start; no
 * lock left in it): child processes start on a copy of it (test/helpers/data-dir.ts) in a
 * fraction of the time initdb and every migration take.
 */
async function migratedDataDir(dir: string): Promise<string> {
  const dataDir = path.join(dir, 'migrated-data-dir');
  const store = await openStore({ dataDir });
  try {
    await migrate(store.db);
  } finally {
    await store.close(); // releases the directory's lock
  }
  return dataDir;
}

/** Writes the data directory of a migrated in-memory PGlite to a file; returns its path. */
async function dumpMigratedPglite(dir: string): Promise<string> {
  const lite = await PGlite.create('memory://');
  const store = await openStore({ dataDir: 'memory://', pglite: lite });
  try {
    await migrate(store.db);
    const dump = await lite.dumpDataDir('none');
    const file = path.join(dir, 'migrated-pglite.tar');
    writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
    return file;
  } finally {
    await store.close(); // closes the PGlite too
  }
}

/**
 * Whether a test or template database is a leftover this run may drop: its run (the pid in its
 * name) is this one or no longer alive. Another suite running beside this one on the same
 * server keeps its template, which nothing is connected to between copies.
 */
function leftover(datname: string): boolean {
  const pid = /^rotscope_(?:test|template)_(\d+)_/.exec(datname)?.[1];
  if (pid === undefined || pid === testRunPid()) return true;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Drops the leftover test and template databases nothing is connected to. Best effort. */
async function dropLeftovers(base: string): Promise<void> {
  try {
    await withAdmin(base, async (admin) => {
      const { rows } = await admin.query<{ datname: string }>(
        `SELECT datname FROM pg_database d
          WHERE (datname LIKE 'rotscope\\_test\\_%' OR datname LIKE 'rotscope\\_template\\_%')
            AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)`,
      );
      for (const { datname } of rows.filter((row) => leftover(row.datname))) {
        await admin.query(`DROP DATABASE IF EXISTS "${datname}"`).catch(() => {});
      }
    });
  } catch {
    // cleanup is best effort: a failure here must not fail the run
  }
}

/** What every project of one run shares: migrated once, however many projects ask. */
interface Prepared {
  dir: string;
  /** The migrated data directory `rotscope` children copy (made on first ask). */
  dataDir: () => Promise<string>;
  template?: string;
  pgliteDump?: string;
}

/**
 * Kept on globalThis: vitest loads this module once per project, all in its one main process,
 * and the projects of a run share what it prepares.
 */
const run = ((
  globalThis as { rotscopeTestSetup?: { prepared?: Promise<Prepared> | undefined; users: number } }
).rotscopeTestSetup ??= { users: 0 });

async function prepare(base: string | undefined): Promise<Prepared> {
  const dir = mkdtempSync(path.join(tmpdir(), 'rotscope-test-pglite-'));
  let dataDir: Promise<string> | undefined;
  const shared: Prepared = { dir, dataDir: () => (dataDir ??= migratedDataDir(dir)) };
  if (base) shared.template = await createTemplate(base);
  else shared.pgliteDump = await dumpMigratedPglite(dir);
  process.stdout.write(
    `rotscope tests: database ${base ? `PostgreSQL (${new URL(base).host}, a template copied per file)` : 'PGlite (embedded, a migrated dump loaded per store)'}; ` +
      `rotscope children run ${childrenFromSource(ROOT) === '1' ? 'src/ through tsx' : 'the compiled dist/ (built from this source)'}\n`,
  );
  return shared;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const base = process.env.DATABASE_URL;
  // the workers name their databases after this run (testRunPid)
  process.env.ROTSCOPE_TEST_RUN_PID ??= String(process.pid);
  run.users++;
  const shared = await (run.prepared ??= prepare(base));
  // Projects that start `rotscope` processes: a migrated data directory they copy.
  project.provide(
    'pgliteDataDir',
    project.name === 'integration' ? undefined : await shared.dataDir(),
  );
  project.provide('templateDatabase', shared.template);
  project.provide('pgliteDump', shared.pgliteDump);
  return async () => {
    if (--run.users > 0) return;
    run.prepared = undefined;
    if (base && shared.template) {
      await withAdmin(base, (admin) =>
        admin.query(`DROP DATABASE IF EXISTS ${shared.template} WITH (FORCE)`),
      ).catch(() => {});
      await dropLeftovers(base);
    }
    rmSync(shared.dir, { recursive: true, force: true });
  };
}
