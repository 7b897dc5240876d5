/**
 * `npm run schema:dump`: writes src/store/schema.sql, the schema a freshly migrated in-memory
 * PGlite has (scripts/schema-dump-lib.ts). Run it after adding a migration (and update the
 * kysely types of src/store/schema.ts to match); test/integration/store/schema-dump.test.ts
 * fails until the file is current.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { openStore } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { dumpSchema, SCHEMA_DUMP_FILE } from './schema-dump-lib.ts';

const store = await openStore({ dataDir: 'memory://' });
try {
  await migrate(store.db);
  const text = await dumpSchema(store.db);
  const name = relative(process.cwd(), SCHEMA_DUMP_FILE);
  let before: string | undefined;
  try {
    before = readFileSync(SCHEMA_DUMP_FILE, 'utf8');
  } catch {
    // not written yet
  }
  if (before === text) {
    process.stdout.write(`${name} is current\n`);
  } else {
    writeFileSync(SCHEMA_DUMP_FILE, text);
    process.stdout.write(`wrote ${name}\n`);
  }
} finally {
  await store.close();
}
