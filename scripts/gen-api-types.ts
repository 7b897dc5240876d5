/**
 * `npm run gen:api-types`: writes ui/src/api-types.gen.ts, the console's API types, from the
 * OpenAPI document of the app built here in process (scripts/api-types.ts) on an in-memory
 * database. Run it after changing a route's schema; the integration test
 * test/integration/api-types-current.test.ts fails until the file is current.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { buildApp } from '../src/api/app.ts';
import { defaultConfig } from '../src/config.ts';
import { openStore } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { API_TYPES_FILE, renderApiTypes } from './api-types.ts';

const store = await openStore({ dataDir: 'memory://' });
try {
  await migrate(store.db);
  const { app } = await buildApp({ store, config: defaultConfig() });
  try {
    const text = await renderApiTypes(app);
    const name = relative(process.cwd(), API_TYPES_FILE);
    let before: string | undefined;
    try {
      before = readFileSync(API_TYPES_FILE, 'utf8');
    } catch {
      // not written yet
    }
    if (before === text) {
      process.stdout.write(`${name} is current\n`);
    } else {
      writeFileSync(API_TYPES_FILE, text);
      process.stdout.write(`wrote ${name}\n`);
    }
  } finally {
    await app.close();
  }
} finally {
  await store.close();
}
