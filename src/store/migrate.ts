/**
 * Applies the numbered SQL files of migrations/ in order, each in its own transaction,
 * forward only. Safe when several processes start at once: a transaction-level advisory
 * lock serializes them, and each re-reads what is applied after taking it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { Db } from './db.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

/** Arbitrary constant shared by every rotscope process: the migration lock's key. */
const MIGRATION_LOCK_KEY = 7_428_001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export interface MigrationResult {
  applied: string[];
  current: number;
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[\w-]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file.replace(/\.sql$/, ''),
      sql: readFileSync(new URL(file, `file://${dir.endsWith('/') ? dir : `${dir}/`}`), 'utf8'),
    }));
}

/** The database holds migrations this code does not know: a newer rotscope migrated it. */
export class SchemaNewerError extends Error {
  readonly code = 'SCHEMA_NEWER';
  constructor(
    readonly databaseVersion: number,
    readonly codeVersion: number,
  ) {
    super(
      `the database's schema is at version ${databaseVersion}, newer than this rotscope knows ` +
        `(${codeVersion}): a newer rotscope migrated it; run that version, or point this one at ` +
        'another database (DATABASE_URL / --database-url, or another --data-dir)',
    );
    this.name = 'SchemaNewerError';
  }
}

/**
 * Applies every migration not applied yet. Returns what it applied. Refuses (SchemaNewerError)
 * a database that a newer rotscope migrated past what this code knows.
 */
export async function migrate(db: Db, migrations = loadMigrations()): Promise<MigrationResult> {
  await sql`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`
    .execute(db)
    .catch(async (error: unknown) => {
      // Two processes racing on CREATE TABLE IF NOT EXISTS can collide on the type's unique index.
      if (!(await schemaMigrationsExists(db))) throw error;
    });
  const known = migrations.at(-1)?.version ?? 0;
  const newest = await currentVersion(db);
  if (newest > known) throw new SchemaNewerError(newest, known);
  const applied: string[] = [];
  for (const migration of migrations) {
    const done = await db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`.execute(trx);
      const existing = await trx
        .selectFrom('schema_migrations')
        .select('version')
        .where('version', '=', migration.version)
        .executeTakeFirst();
      if (existing) return false;
      await sql.raw(migration.sql).execute(trx);
      await trx
        .insertInto('schema_migrations')
        .values({ version: migration.version, name: migration.name })
        .execute();
      return true;
    });
    if (done) applied.push(migration.name);
  }
  return { applied, current: migrations.at(-1)?.version ?? 0 };
}

/** The highest applied version, or 0; readiness compares it with the files on disk. */
export async function currentVersion(db: Db): Promise<number> {
  if (!(await schemaMigrationsExists(db))) return 0;
  const row = await db
    .selectFrom('schema_migrations')
    .select((eb) => eb.fn.max('version').as('version'))
    .executeTakeFirst();
  return Number(row?.version ?? 0);
}

async function schemaMigrationsExists(db: Db): Promise<boolean> {
  const result = await sql<{
    exists: boolean;
  }>`SELECT to_regclass('schema_migrations') IS NOT NULL AS exists`.execute(db);
  return result.rows[0]?.exists === true;
}
