/**
 * Property tests of the JSON API, the sibling of test/unit/otlp/decode-fuzz.test.ts: random
 * and mutated bodies, path parameters and queries on every /api route of the OpenAPI
 * document, through `inject()` on the real app over a real store (PGlite, or PostgreSQL with
 * DATABASE_URL). Never a 500; every 4xx is a JSON `{ error, message }`; a NUL or lone UTF-16
 * surrogate anywhere, or a cursor the API did not return, is a 400 naming where.
 *
 * `POST /api/channels/{id}/test` sends a message, so the random requests leave it out (a
 * mutated channel could point anywhere); the unstorable-text table still covers its id.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/api/app.ts';
import { defaultConfig } from '../../src/config.ts';
import type { FindingDraft } from '../../src/model/findings.ts';
import { enqueueDeliveries } from '../../src/store/deliveries.ts';
import { upsertFinding } from '../../src/store/findings.ts';
import { createToken } from '../../src/store/workspaces.ts';
import { jsonRequest, jsonSpan } from '../helpers/otlp-bodies.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface Route {
  method: Method;
  /** OpenAPI form: `/api/channels/{id}`. */
  path: string;
  pathParams: string[];
  queryParams: string[];
  hasBody: boolean;
}

interface Request {
  method: Method;
  url: string;
  /** Already serialized (JSON text, or deliberately broken text). */
  payload?: string;
}

let store: TestStore;
let built: App;
let authorization: string;
/** The fuzzer's own admin token: a random revoke may hit it, and is then undone. */
let ownTokenId: string;
let routes: Route[];
/** Real values of the seeded data: ids, cursors, names. */
const seeds = {
  ids: [] as string[],
  cursors: [] as string[],
  bodies: new Map<string, unknown[]>(),
};

const send = (request: Request) =>
  built.app.inject({
    method: request.method,
    url: request.url,
    headers: {
      authorization,
      ...(request.payload !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(request.payload !== undefined ? { payload: request.payload } : {}),
  });

const routeKey = (route: Pick<Route, 'method' | 'path'>) => `${route.method} ${route.path}`;

function draft(i: number): FindingDraft {
  return {
    detector: 'output_cut_off',
    anchor: `a${i}`,
    severity: 'warning',
    kind: null,
    conversationId: `conv-${i % 2}`,
    streamKey: `conv-${i % 2}`,
    runId: `run-${i}`,
    traceId: `trace-${i}`,
    spanId: `span-${i}`,
    model: 'gpt-4o',
    summary: 'Output cut off',
    details: { outputTokens: 4096 },
  };
}

beforeAll(async () => {
  store = await createTestStore();
  // Private destinations allowed: creating a channel resolves nothing (no DNS). No background
  // loops run, so no delivery is ever sent.
  built = await buildApp({ store, config: defaultConfig({ allowPrivateAddresses: true }) });
  await built.app.ready();
  const own = await createToken(store.db, 'default', 'admin');
  authorization = `Bearer ${own.token}`;
  ownTokenId = own.id;

  // Conversations and runs, through the receiver.
  const spans = [0, 1, 2].map((i) =>
    jsonSpan({
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.conversation.id': `conv-${i}`,
        'gen_ai.usage.input_tokens': 1000 + i,
        'gen_ai.usage.output_tokens': 10,
      },
    }),
  );
  const ingest = await send({
    method: 'POST',
    url: '/v1/traces',
    payload: JSON.stringify(jsonRequest(spans)),
  });
  expect(ingest.statusCode).toBe(200);
  seeds.ids.push(...spans.map((span) => span.traceId), 'conv-0', 'conv-1');

  // Channels attached to the alert, findings, and their deliveries.
  const channelIds: string[] = [];
  for (const port of [9, 10]) {
    const created = await send({
      method: 'POST',
      url: '/api/channels',
      payload: JSON.stringify({
        type: 'webhook',
        name: `hook ${port}`,
        config: { url: `http://127.0.0.1:${port}/hook` },
      }),
    });
    expect(created.statusCode).toBe(201);
    channelIds.push(created.json<{ id: string }>().id);
  }
  const attach = await send({
    method: 'PUT',
    url: '/api/alerts/context-rot',
    payload: JSON.stringify({ channels: channelIds.map((id) => ({ id, minSeverity: 'info' })) }),
  });
  expect(attach.statusCode).toBe(200);
  for (let i = 0; i < 3; i++) {
    const { id } = await upsertFinding(store.db, 'default', draft(i));
    await enqueueDeliveries(store.db, {
      workspaceId: 'default',
      findingId: id,
      severity: 'warning',
      event: 'created',
    });
    seeds.ids.push(id);
  }
  seeds.ids.push(...channelIds);
  // Two mutes (one holds until a time), so their list has a next page too.
  for (const body of [
    { detector: 'history_lost' },
    { model: 'gpt-4o', until: '2999-01-01T00:00:00Z' },
  ]) {
    const mute = await send({ method: 'POST', url: '/api/mutes', payload: JSON.stringify(body) });
    expect(mute.statusCode).toBe(201);
    seeds.ids.push(mute.json<{ id: string }>().id);
  }

  routes = await readRoutes();
  // A real `next` of every list (limit=1: each has at least two items).
  for (const route of routes.filter((r) => r.queryParams.includes('cursor'))) {
    const page = await send({ method: 'GET', url: `${route.path}?limit=1` });
    const next = page.json<{ next: string | null }>().next;
    expect(next, route.path).toEqual(expect.any(String));
    seeds.cursors.push(next!);
  }

  // Valid bodies to mutate, for every route that takes one.
  const channel = (await send({ method: 'GET', url: `/api/channels/${channelIds[0]}` })).json();
  const alert = (await send({ method: 'GET', url: '/api/alerts/context-rot' })).json();
  seeds.bodies.set('POST /api/channels', [
    {
      type: 'webhook',
      name: 'w',
      config: { url: 'http://127.0.0.1:9/h', headers: { 'X-A': 'b' } },
    },
    { type: 'slack', name: 's', config: { webhookUrl: 'https://hooks.slack.com/services/x' } },
    {
      type: 'email',
      name: 'e',
      config: {
        host: '127.0.0.1',
        port: 2525,
        secure: false,
        user: 'u',
        password: 'p',
        from: 'a@example.com',
        to: ['b@example.com'],
      },
    },
  ]);
  seeds.bodies.set('PATCH /api/channels/{id}', [channel, { name: 'renamed' }]);
  const alertBodies = [alert, { windowOverrides: [{ model: 'claude-*', window: 200_000 }] }];
  seeds.bodies.set('PUT /api/alerts/context-rot', alertBodies);
  // the preview takes the body PUT takes
  seeds.bodies.set('POST /api/alerts/context-rot/preview', alertBodies);
  seeds.bodies.set('POST /api/tokens', [
    { scope: 'read' },
    { workspace: 'default', scope: 'read' },
  ]);
  // `rotscope import` beside the server: one file's text (here a transcript line), then evaluate
  const transcriptLine = JSON.stringify({ type: 'summary', summary: 'fuzzed', leafUuid: 'u-1' });
  seeds.bodies.set('POST /api/import', [
    { path: '/home/u/.claude/projects/-p/s-1.jsonl', text: `${transcriptLine}\n` },
    { workspace: 'default', path: 'rollout-x.jsonl', text: '', historyBefore: '1' },
  ]);
  seeds.bodies.set('POST /api/mutes', [
    { project: '/srv/app/alpha-svc', detector: 'tool_takeover', note: 'n' },
    { model: 'gpt-4o', until: '2999-01-01T00:00:00+02:00' },
  ]);
  seeds.bodies.set('POST /api/findings/{id}/acknowledge', [{ note: 'known' }, { note: ' x ' }]);
  seeds.bodies.set('POST /api/import/evaluate', [
    { conversations: ['conv-0'] },
    { workspace: 'default', conversations: [] },
  ]);
}, 120_000);

afterAll(async () => {
  await built?.app.close();
  await store?.close();
});

/** Every /api route of the OpenAPI document. */
async function readRoutes(): Promise<Route[]> {
  const doc = (await send({ method: 'GET', url: '/api/openapi.json' })).json<{
    paths: Record<
      string,
      Record<string, { parameters?: Array<{ in: string; name: string }>; requestBody?: unknown }>
    >;
  }>();
  return Object.entries(doc.paths)
    .filter(([path]) => path.startsWith('/api/'))
    .flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, operation]) => ({
        method: method.toUpperCase() as Method,
        path,
        pathParams: (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: (operation.parameters ?? [])
          .filter((p) => p.in === 'query')
          .map((p) => p.name),
        hasBody: operation.requestBody !== undefined,
      })),
    );
}

/** Percent-encodes every byte of a string's UTF-8 form. */
const percentEncode = (text: string) =>
  [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');

function urlOf(route: Route, params: Record<string, string>, query: Array<[string, string]>) {
  let path = route.path;
  for (const name of route.pathParams) path = path.replace(`{${name}}`, params[name] ?? '1');
  const search = query.map(([key, value]) => `${key}=${value}`).join('&');
  return search === '' ? path : `${path}?${search}`;
}

// --- arbitraries ---------------------------------------------------------------------------

const nasty = fc.constantFrom(
  '\0',
  'a\0b',
  '\ud800',
  'x\udfff',
  '99999999999999999999',
  '9223372036854775808',
  '-1',
  '0',
  '',
  ' ',
  '1e400',
  'null',
  '%',
  '../..',
  'x'.repeat(3000),
);

/** Strings: random code points (lone surrogates included), nasty constants, real values. */
const text = () =>
  fc.oneof(
    fc.string({ unit: 'binary', maxLength: 30 }),
    nasty,
    fc.constantFrom(...seeds.ids, ...seeds.cursors),
  );

const leaf = () =>
  fc.oneof(
    text(),
    fc.integer(),
    fc.double(),
    fc.constantFrom(2 ** 63, 1e300, -0, 0.5, true, false, null),
    fc.constant([]),
    fc.constant({}),
  );

/** A cursor a list returned, with a few characters changed. */
const mutatedCursor = () =>
  fc
    .tuple(fc.constantFrom(...seeds.cursors), fc.nat(), fc.string({ maxLength: 3 }))
    .map(([cursor, at, insert]) => {
      const i = at % (cursor.length + 1);
      return cursor.slice(0, i) + insert + cursor.slice(i + 1);
    });

/** Path parameter or query value, as it goes into the URL. */
const urlValue = () =>
  fc.oneof(
    text().map(percentEncode),
    mutatedCursor().map(percentEncode),
    fc
      .uint8Array({ maxLength: 12 })
      .map((bytes) => [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')),
    fc.constantFrom('99999999999999999999', '1', '%00', '%ED%A0%80', '%', 'a%2Fb'),
  );

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every path into a JSON value (root included). */
function nodePaths(
  value: unknown,
  path: Array<string | number> = [],
): Array<Array<string | number>> {
  const out = [path];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...nodePaths(v, [...path, i])));
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) out.push(...nodePaths(v, [...path, k]));
  return out;
}

interface Edit {
  at: number;
  op: 'replace' | 'delete' | 'add';
  key: string;
  value: unknown;
}

/** Replaces, deletes or adds a node of a JSON value (a copy). */
function mutate(base: unknown, edits: Edit[]): unknown {
  let root = structuredClone(base) as Json;
  // Each edit's value is its own copy: fast-check hands the same `[]`/`{}` to several edits,
  // and adding a shared array into itself made a cycle JSON.stringify cannot write.
  for (const { value, ...edit } of edits.map((e) => ({ ...e, value: structuredClone(e.value) }))) {
    const paths = nodePaths(root);
    const path = paths[edit.at % paths.length]!;
    if (path.length === 0) {
      if (edit.op === 'replace') root = value as Json;
      else if (edit.op === 'add' && root && typeof root === 'object' && !Array.isArray(root))
        root[edit.key] = value as Json;
      continue;
    }
    const parent = path.slice(0, -1).reduce<Json>((node, key) => (node as never)[key], root) as
      Json[] | Record<string, Json>;
    const last = path.at(-1)!;
    if (edit.op === 'delete') {
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete parent[last];
    } else if (edit.op === 'replace') (parent as Record<string, Json>)[last] = value as Json;
    else {
      const target = (parent as Record<string, Json>)[last];
      if (Array.isArray(target)) target.push(value as Json);
      else if (target && typeof target === 'object') target[edit.key] = value as Json;
      else (parent as Record<string, Json>)[last] = [target ?? null, value as Json];
    }
  }
  return root;
}

const edit = () =>
  fc.record({
    at: fc.nat(),
    op: fc.constantFrom('replace', 'delete', 'add') as fc.Arbitrary<Edit['op']>,
    key: fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), fc.constantFrom('id', '__proto__')),
    value: leaf(),
  });

/** A body for a route: a seed with a few edits, arbitrary JSON, or broken JSON text. */
function bodyFor(route: Route): fc.Arbitrary<string> {
  const bases = seeds.bodies.get(routeKey(route)) ?? [{}];
  return fc.oneof(
    {
      weight: 5,
      arbitrary: fc
        .tuple(fc.constantFrom(...bases), fc.array(edit(), { minLength: 1, maxLength: 4 }))
        .map(([base, edits]) => JSON.stringify(mutate(base, edits))),
    },
    { weight: 2, arbitrary: fc.jsonValue().map((value) => JSON.stringify(value)) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...bases), fc.nat(), fc.string({ maxLength: 4 }))
        .map(([base, at, insert]) => {
          const json = JSON.stringify(base);
          const i = at % (json.length + 1);
          return json.slice(0, i) + insert + json.slice(i + 1);
        }),
    },
  );
}

function requestFor(route: Route): fc.Arbitrary<Request> {
  const param = fc.oneof(fc.constantFrom(...seeds.ids), urlValue());
  const params = fc.tuple(...route.pathParams.map(() => param));
  const known =
    route.queryParams.length > 0 ? fc.constantFrom(...route.queryParams) : fc.constant('x');
  const query = fc.array(
    fc.tuple(
      fc.oneof(
        { weight: 4, arbitrary: known },
        { weight: 1, arbitrary: fc.string({ maxLength: 6 }).map(encodeURIComponent) },
      ),
      urlValue(),
    ),
    { maxLength: 4 },
  );
  const body = route.hasBody ? fc.option(bodyFor(route), { freq: 8 }) : fc.constant(null);
  return fc.tuple(params, query, body).map(([values, pairs, payload]) => ({
    method: route.method,
    url: urlOf(
      route,
      Object.fromEntries(route.pathParams.map((name, i) => [name, values[i]!])),
      pairs,
    ),
    ...(payload !== null ? { payload } : {}),
  }));
}

async function expectHandled(request: Request) {
  const response = await send(request);
  const where = `${request.method} ${request.url} ${request.payload ?? ''}`.slice(0, 400);
  expect(response.statusCode, where).toBeLessThan(500);
  if (response.statusCode >= 400) {
    const body = response.json<{ error?: unknown; message?: unknown }>();
    expect(body.error, where).toMatch(/\w/);
    expect(body.message, where).toMatch(/\w/);
  } else if (response.statusCode !== 204) {
    expect(() => response.json(), where).not.toThrow();
  }
  return response;
}

// --- properties ----------------------------------------------------------------------------

describe('unstorable text (NUL, lone UTF-16 surrogate)', () => {
  /** Every string leaf (and key) of a JSON value, as a path and a setter on a copy. */
  function stringSlots(value: unknown): Array<{ path: string; withText: (t: string) => unknown }> {
    return nodePaths(value).flatMap((path) => {
      const node = path.reduce<unknown>((n, key) => (n as never)[key], value);
      const name = ['body', ...path].join('/');
      const slots: Array<{ path: string; withText: (t: string) => unknown }> = [];
      if (typeof node === 'string')
        slots.push({
          path: name,
          withText: (t) =>
            mutate(value, [{ at: indexOf(value, path), op: 'replace', key: '', value: node + t }]),
        });
      if (node && typeof node === 'object' && !Array.isArray(node))
        slots.push({
          path: `${name} (a key)`,
          withText: (t) =>
            mutate(value, [{ at: indexOf(value, path), op: 'add', key: `k${t}`, value: 1 }]),
        });
      return slots;
    });
  }
  const indexOf = (value: unknown, path: Array<string | number>) =>
    nodePaths(value).findIndex((p) => p.join('\u0001') === path.join('\u0001'));

  it('in any string of any body is a 400 naming the field', async () => {
    let checked = 0;
    for (const route of routes.filter((r) => r.hasBody)) {
      for (const base of seeds.bodies.get(routeKey(route)) ?? []) {
        for (const slot of stringSlots(base)) {
          for (const bad of ['\0', '\ud800', '\udc00']) {
            const request = {
              method: route.method,
              url: urlOf(route, { id: seeds.ids.at(-1)! }, []),
              payload: JSON.stringify(slot.withText(bad)),
            };
            const response = await send(request);
            expect(response.statusCode, `${request.url} ${request.payload}`).toBe(400);
            expect(response.json<{ message: string }>().message).toBe(
              `${slot.path} must not contain NUL or a lone UTF-16 surrogate`,
            );
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
  });

  it('in any path parameter or query parameter is a 400 naming it', async () => {
    for (const route of routes) {
      for (const name of route.pathParams) {
        const response = await send({
          method: route.method,
          url: urlOf(route, { [name]: 'a%00b' }, []),
        });
        expect(response.statusCode, routeKey(route)).toBe(400);
        expect(response.json<{ message: string }>().message).toBe(
          `params/${name} must not contain NUL or a lone UTF-16 surrogate`,
        );
      }
      for (const name of route.queryParams) {
        const response = await send({
          method: route.method,
          url: urlOf(route, {}, [[name, '%00']]),
        });
        expect(response.statusCode, `${routeKey(route)} ?${name}`).toBe(400);
        expect(response.json<{ message: string }>().message).toBe(
          `querystring/${name} must not contain NUL or a lone UTF-16 surrogate`,
        );
      }
    }
  });

  it('the examples of the issue', async () => {
    for (const url of [
      '/api/conversations/a%00b',
      '/api/runs/a%00b',
      '/api/findings?conversationId=%00',
    ]) {
      const response = await send({ method: 'GET', url });
      expect(response.statusCode, url).toBe(400);
      expect(response.json<{ message: string }>().message).toMatch(
        /^(params\/id|querystring\/conversationId) must not/,
      );
    }
  });
});

describe('cursors', () => {
  const lists = () => routes.filter((r) => r.method === 'GET' && r.queryParams.includes('cursor'));

  it('every list is paged by cursor', () => {
    expect(
      lists()
        .map((r) => r.path)
        .sort(),
    ).toEqual([
      '/api/channels',
      '/api/conversations',
      '/api/deliveries',
      '/api/findings',
      '/api/mutes',
    ]);
  });

  it('a cursor a list did not return is the same 400 on every list', async () => {
    const foreign = (key: unknown) => Buffer.from(JSON.stringify(key)).toString('base64url');
    const bad = [
      '99999999999999999999',
      '999999999999999999',
      'garbage',
      '',
      foreign(['99999999999999999999', 'x']),
      foreign(['9223372036854775808']),
      foreign(['1', 'a\u0000b']),
      foreign(['-1', '1']),
      foreign([1, 2]),
      foreign({ t: '0000-01-01T00:00:00.000000Z', id: '1' }),
    ];
    for (const cursor of bad) {
      for (const route of lists()) {
        const response = await send({
          method: 'GET',
          url: `${route.path}?cursor=${encodeURIComponent(cursor)}`,
        });
        expect(response.statusCode, `${route.path} ${cursor}`).toBe(400);
        expect(response.json(), `${route.path} ${cursor}`).toEqual({
          error: 'bad_request',
          message: 'querystring/cursor is not one this API returned',
        });
      }
    }
  });

  it('a time past the year 9999 in a cursor is refused where the key is a time', async () => {
    const cursor = Buffer.from(JSON.stringify(['253402300800000000', '1'])).toString('base64url');
    for (const path of ['/api/findings', '/api/deliveries']) {
      const response = await send({ method: 'GET', url: `${path}?cursor=${cursor}` });
      expect(response.statusCode, path).toBe(400);
    }
  });

  it('a date-time the schema lets through but no Date holds is a 400 naming it', async () => {
    const response = await send({
      method: 'GET',
      url: '/api/findings?since=2024-12-31T23:59:60Z',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json<{ message: string }>().message).toContain('querystring/since');
  });

  it('the next of every list walks it to the end, each item once', async () => {
    for (const route of lists()) {
      const seen: string[] = [];
      let url: string | null = `${route.path}?limit=1`;
      while (url !== null) {
        const response = await expectHandled({ method: 'GET', url });
        const page: { items: Array<{ id: string }>; next: string | null } = response.json();
        seen.push(...page.items.map((item) => item.id));
        url = page.next === null ? null : `${route.path}?limit=1&cursor=${page.next}`;
      }
      const all = (await send({ method: 'GET', url: `${route.path}?limit=200` })).json<{
        items: Array<{ id: string }>;
      }>();
      expect(seen, route.path).toEqual(all.items.map((item) => item.id));
      expect(seen.length, route.path).toBeGreaterThanOrEqual(2);
    }
  });
});

describe('the JSON API under random and mutated requests', () => {
  it('reads every /api route from the OpenAPI document, and has a seed body for each that takes one', () => {
    expect(routes.length).toBeGreaterThanOrEqual(15);
    for (const route of routes.filter((r) => r.hasBody))
      expect(seeds.bodies.has(routeKey(route)), routeKey(route)).toBe(true);
  });

  it('never answers 5xx, and every 4xx is a JSON error with a message', async () => {
    // Test sends would leave the machine for whatever a mutated channel names.
    const outcomes = new Map<string, number>();
    const fuzzed = routes.filter((r) => !r.path.endsWith('/test'));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...fuzzed).chain(requestFor), async (request) => {
        const { statusCode } = await expectHandled(request);
        // A revoke takes effect at once; one that hit the fuzzer's own token is undone, so
        // the rest of the walk is not all 401s.
        if (request.url.split('?')[0]!.endsWith('/revoke') && statusCode < 300)
          await store.db
            .updateTable('api_tokens')
            .set({ revoked_at: null })
            .where('id', '=', ownTokenId)
            .execute();
        const outcome = statusCode < 300 ? 'ok' : String(statusCode);
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }),
      { numRuns: 400 },
    );
    // The mutations stay close enough to valid requests that many get through.
    expect(outcomes.get('ok') ?? 0).toBeGreaterThan(40);
    expect(outcomes.get('400') ?? 0).toBeGreaterThan(40);
  }, 240_000);
});
