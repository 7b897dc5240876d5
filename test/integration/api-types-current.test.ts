/**
 * The console's API types (ui/src/api-types.gen.ts) are those of the OpenAPI document the
 * server serves today: generated again here, in memory, the same way `npm run gen:api-types`
 * does (scripts/api-types.ts), they must be the committed file, byte for byte.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/api/app.ts';
import { defaultConfig } from '../../src/config.ts';
import { API_TYPES_COMMAND, API_TYPES_FILE, renderApiTypes } from '../../scripts/api-types.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

let store: TestStore;
let built: App;

beforeAll(async () => {
  store = await createTestStore();
  built = await buildApp({ store, config: defaultConfig() });
  await built.app.ready();
}, 120_000);
afterAll(async () => {
  await built?.app.close();
  await store?.close();
});

it('ui/src/api-types.gen.ts is generated from the current /api/openapi.json', async () => {
  const generated = await renderApiTypes(built.app);
  let committed = '';
  try {
    committed = readFileSync(API_TYPES_FILE, 'utf8');
  } catch {
    // missing: stale too
  }
  // The whole text in a diff would bury the line that changed: name the first one instead.
  const [want, got] = [generated.split('\n'), committed.split('\n')];
  let line = 0;
  while (line < Math.max(want.length, got.length) && want[line] === got[line]) line += 1;
  expect(
    committed === generated,
    `ui/src/api-types.gen.ts is stale (first difference at line ${line + 1}: ` +
      `${JSON.stringify(got[line] ?? '<end of file>')}, generated ${JSON.stringify(want[line] ?? '<end of file>')}): ` +
      `run \`${API_TYPES_COMMAND}\``,
  ).toBe(true);
}, 60_000);

it('generates the same text twice', async () => {
  expect(await renderApiTypes(built.app)).toBe(await renderApiTypes(built.app));
}, 60_000);
