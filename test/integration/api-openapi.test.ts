/**
 * The OpenAPI document at /api/openapi.json is generated from the routes' zod schemas, the same
 * ones fastify validates and serializes with: every /api operation documents its answer, and
 * the threshold bounds it shows are those of src/model/thresholds.ts.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/api/app.ts';
import { defaultConfig } from '../../src/config.ts';
import { findingSchema } from '../../src/model/findings.ts';
import { checkThresholds, DEFAULT_THRESHOLDS, THRESHOLD_KEYS } from '../../src/model/thresholds.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  minimum?: number;
  maximum?: number;
}
interface Operation {
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema: Schema }> }>;
}

let store: TestStore;
let built: App;
let paths: Record<string, Record<string, Operation>>;
/** The named answers (`components.schemas`) that `$ref`s point at. */
let components: Record<string, Schema>;

beforeAll(async () => {
  store = await createTestStore();
  built = await buildApp({ store, config: defaultConfig() });
  await built.app.ready();
  const document = (await built.app.inject({ method: 'GET', url: '/api/openapi.json' })).json<{
    paths: typeof paths;
    components?: { schemas?: typeof components };
  }>();
  paths = document.paths;
  components = document.components?.schemas ?? {};
}, 120_000);
afterAll(async () => {
  await built?.app.close();
  await store?.close();
});

/** A schema, or the named one its `$ref` points at. */
const resolved = (schema?: Schema): Schema | undefined =>
  schema?.$ref ? components[schema.$ref.replace('#/components/schemas/', '')] : schema;

const schemaOf = (part?: { content?: Record<string, { schema: Schema }> }) =>
  resolved(part?.content?.['application/json']?.schema);

it('documents the answer of every /api operation', () => {
  const operations = Object.entries(paths)
    .filter(([path]) => path.startsWith('/api/'))
    .flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ name: `${method} ${path}`, op })),
    );
  expect(operations.length).toBeGreaterThanOrEqual(15);
  for (const { name, op } of operations) {
    const success = Object.keys(op.responses ?? {}).find((code) => /^2/.test(code));
    expect(success, name).toBeDefined();
    if (success === '204') continue;
    expect(schemaOf(op.responses?.[success!])?.type, name).toBe('object');
  }
});

it('shows the Finding of src/model/findings.ts', () => {
  const finding = schemaOf(paths['/api/findings/{id}']?.get?.responses?.['200']);
  expect(Object.keys(finding?.properties ?? {}).sort()).toEqual(
    Object.keys(findingSchema.shape).sort(),
  );
  expect(finding?.properties?.kind?.type).toEqual(['string', 'null']);
});

it('shows the threshold bounds checkThresholds enforces', () => {
  const body = schemaOf(paths['/api/alerts/context-rot']?.put?.requestBody);
  const thresholds = body?.properties?.thresholds?.properties ?? {};
  expect(Object.keys(thresholds)).toEqual([...THRESHOLD_KEYS]);
  for (const key of THRESHOLD_KEYS) {
    const { minimum, maximum } = thresholds[key] ?? {};
    expect(minimum, key).toEqual(expect.any(Number));
    const at = (value: number) =>
      checkThresholds(
        { ...DEFAULT_THRESHOLDS, usageCritical: 1, usageThreshold: 0, [key]: value },
        { name: String, shown: String },
      ).ok;
    // The documented edge is accepted, a step past it refused.
    expect(at(minimum!), `${key} = ${minimum}`).toBe(true);
    expect(at(minimum! - 0.5), `${key} < ${minimum}`).toBe(false);
    if (maximum !== undefined) {
      expect(at(maximum), `${key} = ${maximum}`).toBe(true);
      expect(at(maximum + 0.5), `${key} > ${maximum}`).toBe(false);
    }
  }
});
