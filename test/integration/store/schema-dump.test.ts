/**
 * The schema dump check (graphile-worker's committed dump that CI compares): a fresh in-memory
 * PGlite migrated here must dump (scripts/schema-dump-lib.ts) to the committed
 * src/store/schema.sql, byte for byte, and the kysely table types of src/store/schema.ts must
 * name exactly the dump's tables and, per table, its columns. A migration without
 * `npm run schema:dump`, or a schema.ts that drifted from the migrations, fails here. PGlite
 * either way (DATABASE_URL or not): the dump is of what the migrations make, not of a server.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/store/db.ts';
import { migrate } from '../../../src/store/migrate.ts';
import {
  dumpSchema,
  SCHEMA_DUMP_FILE,
  tablesOfDump,
  tablesOfSchemaTs,
} from '../../../scripts/schema-dump-lib.ts';

let store: Store;
let dump: string;

beforeAll(async () => {
  store = await openStore({ dataDir: 'memory://' });
  await migrate(store.db);
  dump = await dumpSchema(store.db);
}, 120_000);
afterAll(async () => {
  await store?.close();
});

it('src/store/schema.sql is the schema a freshly migrated store has', () => {
  let committed = '';
  try {
    committed = readFileSync(SCHEMA_DUMP_FILE, 'utf8');
  } catch {
    // missing: the comparison below says so
  }
  expect(
    dump === committed,
    'src/store/schema.sql is not the migrated schema: run `npm run schema:dump` and commit it',
  ).toBe(true);
});

it("src/store/schema.ts's kysely tables and columns are the migrated schema's", () => {
  const migrated = tablesOfDump(dump);
  const typed = tablesOfSchemaTs();
  expect(migrated.size).toBeGreaterThan(0);
  const sorted = (tables: Map<string, string[]>) =>
    Object.fromEntries(
      [...tables].sort(([a], [b]) => (a < b ? -1 : 1)).map(([t, c]) => [t, [...c].sort()]),
    );
  expect(sorted(typed)).toEqual(sorted(migrated));
});

it('the dump check sees a drift: a column or table schema.ts lacks', () => {
  const typed = tablesOfSchemaTs();
  const migrated = tablesOfDump(
    dump.replace(
      'CREATE TABLE public.workspaces (\n',
      'CREATE TABLE public.workspaces (\n    extra text,\n',
    ),
  );
  expect(migrated.get('workspaces')).toContain('extra');
  expect(typed.get('workspaces')).not.toContain('extra');
});
