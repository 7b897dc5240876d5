/**
 * The findings and alert-settings routes on a bare fastify instance whose onRequest hook sets
 * the workspace from an `x-workspace` header (the real auth hook is tested with buildApp).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertsRoutes } from '../../src/api/routes/alerts.ts';
import { findingsRoutes } from '../../src/api/routes/findings.ts';
import { defaultConfig } from '../../src/config.ts';
import type { FindingDraft } from '../../src/model/findings.ts';
import { upsertFinding } from '../../src/store/findings.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

let store: TestStore;
let app: FastifyInstance;
/** `METHOD url` to the scope the route declares. */
const scopes = new Map<string, string | undefined>();

function draft(overrides: Partial<FindingDraft>): FindingDraft {
  return {
    detector: 'output_cut_off',
    anchor: 'a',
    severity: 'warning',
    kind: null,
    conversationId: 'conv-1',
    streamKey: 'conv-1',
    runId: 'run-1',
    traceId: 'trace-1',
    spanId: 'span-1',
    model: 'claude-sonnet-4',
    summary: 'Output cut off at 4,096 tokens',
    details: { outputTokens: 4096, limit: 4096 },
    ...overrides,
  };
}

beforeAll(async () => {
  store = await createTestStore();
  await store.db.insertInto('workspaces').values({ id: 'other' }).execute();
  app = Fastify({ logger: false });
  app.decorateRequest('workspaceId', '');
  app.addHook('onRequest', async (request) => {
    request.workspaceId = String(request.headers['x-workspace'] ?? 'default');
  });
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat())
      scopes.set(`${method} ${route.url}`, route.config?.scope);
  });
  const deps = { store, config: defaultConfig(), log: app.log, tokensChanged: () => {} };
  await app.register(findingsRoutes, deps);
  await app.register(alertsRoutes, deps);
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await store?.close();
});

describe('GET /api/findings', () => {
  let ids: string[] = [];
  beforeAll(async () => {
    // One transaction: the same created_at for all five, so pages are cut by id.
    ids = await store.db.transaction().execute(async (trx) => {
      const out: string[] = [];
      for (let i = 0; i < 5; i++) {
        const result = await upsertFinding(
          trx,
          'default',
          draft({
            anchor: `a${i}`,
            detector: i < 3 ? 'output_cut_off' : 'history_lost',
            severity: i === 4 ? 'critical' : 'warning',
            conversationId: i % 2 === 0 ? 'conv-even' : 'conv-odd',
            runId: `run-${i}`,
          }),
        );
        out.push(result.id);
      }
      return out;
    });
    await upsertFinding(store.db, 'other', draft({ anchor: 'secret' }));
  });

  it('lists the workspace newest first, paginated by cursor', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: Record<string, string> = { limit: '2', ...(cursor ? { cursor } : {}) };
      const res = await app.inject({ method: 'GET', url: '/api/findings', query });
      expect(res.statusCode).toBe(200);
      const body = res.json() as {
        items: { id: string; workspace: string }[];
        next: string | null;
      };
      expect(body.items.length).toBeLessThanOrEqual(2);
      for (const item of body.items) expect(item.workspace).toBe('default');
      seen.push(...body.items.map((i) => i.id));
      cursor = body.next;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
  });

  it('returns the Finding shape', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/findings', query: { limit: '1' } });
    const [item] = (res.json() as { items: Record<string, unknown>[] }).items;
    expect(item).toMatchObject({
      id: ids[4],
      detector: 'history_lost',
      severity: 'critical',
      kind: null,
      workspace: 'default',
      conversationId: 'conv-even',
      runId: 'run-4',
      traceId: 'trace-1',
      spanId: 'span-1',
      model: 'claude-sonnet-4',
      summary: 'Output cut off at 4,096 tokens',
      details: { outputTokens: 4096, limit: 4096 },
    });
    expect(Date.parse(item?.createdAt as string)).not.toBeNaN();
    expect(Date.parse(item?.updatedAt as string)).not.toBeNaN();
  });

  it('filters by detector, severity, conversation, run and time', async () => {
    const list = async (query: Record<string, string>) => {
      const res = await app.inject({ method: 'GET', url: '/api/findings', query });
      expect(res.statusCode).toBe(200);
      return (res.json() as { items: { id: string }[] }).items.map((i) => i.id);
    };
    expect(await list({ detector: 'history_lost' })).toEqual([ids[4], ids[3]]);
    expect(await list({ severity: 'critical' })).toEqual([ids[4]]);
    expect(await list({ conversationId: 'conv-odd' })).toEqual([ids[3], ids[1]]);
    expect(await list({ runId: 'run-2' })).toEqual([ids[2]]);
    expect(await list({ detector: 'output_cut_off', conversationId: 'conv-even' })).toEqual([
      ids[2],
      ids[0],
    ]);
    expect(
      await list({ since: '2000-01-01T00:00:00Z', until: '2999-01-01T00:00:00Z' }),
    ).toHaveLength(5);
    expect(await list({ since: '2999-01-01T00:00:00Z' })).toEqual([]);
    expect(await list({ until: '2000-01-01T00:00:00Z' })).toEqual([]);
  });

  it('rejects bad filters and cursors with 400', async () => {
    const bad = async (query: Record<string, string>) =>
      (await app.inject({ method: 'GET', url: '/api/findings', query })).statusCode;
    expect(await bad({ detector: 'nope' })).toBe(400);
    expect(await bad({ severity: 'fatal' })).toBe(400);
    expect(await bad({ limit: '0' })).toBe(400);
    expect(await bad({ limit: '201' })).toBe(400);
    expect(await bad({ since: 'yesterday' })).toBe(400);
    const res = await app.inject({
      method: 'GET',
      url: '/api/findings',
      query: { cursor: 'garbage' },
    });
    expect(res.statusCode).toBe(400);
    // The whole `{ error, message }` body is the app's error handler's (api-fuzz.test.ts).
    expect(res.json()).toMatchObject({
      message: 'querystring/cursor is not one this API returned',
    });
  });
});

describe('GET /api/findings/:id', () => {
  it('returns a finding of the workspace with its details', async () => {
    const { id } = await upsertFinding(
      store.db,
      'default',
      draft({ anchor: 'by-id', details: { n: [1, 2] } }),
    );
    const res = await app.inject({ method: 'GET', url: `/api/findings/${id}` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id, anchor: 'by-id', details: { n: [1, 2] } });
  });

  it('answers 404 for another workspace, an unknown id or a malformed one', async () => {
    const { id } = await upsertFinding(store.db, 'other', draft({ anchor: 'hidden' }));
    for (const [path, workspace] of [
      [id, 'default'],
      ['999999999', 'default'],
      ['abc', 'default'],
      ['99999999999999999999', 'default'],
    ] as const) {
      const res = await app.inject({
        method: 'GET',
        url: `/api/findings/${path}`,
        headers: { 'x-workspace': workspace },
      });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'not_found', message: `no finding "${path}"` });
    }
    const own = await app.inject({
      method: 'GET',
      url: `/api/findings/${id}`,
      headers: { 'x-workspace': 'other' },
    });
    expect(own.statusCode).toBe(200);
  });
});

describe('GET/PUT /api/alerts/context-rot', () => {
  const ws = { 'x-workspace': 'other' };
  const put = (payload: unknown) =>
    app.inject({
      method: 'PUT',
      url: '/api/alerts/context-rot',
      headers: ws,
      payload: payload as object,
    });
  const get = async () =>
    (await app.inject({ method: 'GET', url: '/api/alerts/context-rot', headers: ws })).json();

  it('returns the defaults when never set', async () => {
    const defaults = {
      usageThreshold: 0.7,
      usageCritical: 0.85,
      toolShare: 0.3,
      toolPersistCalls: 2,
      dropRatio: 0.3,
      dropMinTokens: 2000,
      systemShrink: 0.1,
    };
    expect(await get()).toEqual({
      enabled: true,
      thresholds: defaults,
      windowOverrides: [],
      channels: [],
      updatedAt: null,
      defaults: { thresholds: defaults },
    });
  });

  it('merges partial thresholds over the current values', async () => {
    let res = await put({
      thresholds: { usageThreshold: 0.6 },
      windowOverrides: [{ model: 'claude-*', window: 1_000_000 }],
    });
    expect(res.statusCode).toBe(200);
    res = await put({ enabled: false, thresholds: { dropMinTokens: 500 } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      enabled: false,
      thresholds: { usageThreshold: 0.6, usageCritical: 0.85, dropMinTokens: 500, toolShare: 0.3 },
      windowOverrides: [{ model: 'claude-*', window: 1_000_000 }],
    });
    expect(await get()).toEqual(body);
    expect(typeof body.updatedAt).toBe('string');
  });

  it('answers 400 with every problem named, and changes nothing', async () => {
    const before = await get();
    // each problem with the field it names (below `body`), for the console to place it
    const cases: [unknown, string, Array<Array<string | number>>][] = [
      [
        { thresholds: { toolShare: 1.5 } },
        'thresholds.toolShare must be a ratio between 0 and 1 (got 1.5)',
        [['thresholds', 'toolShare']],
      ],
      [
        { thresholds: { dropRatio: -0.1 } },
        'thresholds.dropRatio must be a ratio between 0 and 1 (got -0.1)',
        [['thresholds', 'dropRatio']],
      ],
      [
        { thresholds: { usageCritical: 0.5 } },
        'thresholds.usageCritical (0.5) must be at least thresholds.usageThreshold (0.6)',
        [['thresholds', 'usageCritical']],
      ],
      [
        { thresholds: { toolPersistCalls: 0 } },
        'thresholds.toolPersistCalls must be a positive integer (got 0)',
        [['thresholds', 'toolPersistCalls']],
      ],
      [
        { thresholds: { dropMinTokens: 2.5 } },
        'thresholds.dropMinTokens must be a positive integer (got 2.5)',
        [['thresholds', 'dropMinTokens']],
      ],
      [
        { thresholds: { usageTreshold: 0.5 } },
        'unknown field thresholds.usageTreshold',
        [['thresholds', 'usageTreshold']],
      ],
      [{ enabledd: true }, 'unknown field enabledd', [['enabledd']]],
      [
        { windowOverrides: [{ model: ' ', window: 0 }] },
        'windowOverrides[0].model must be a non-empty model glob; windowOverrides[0].window must be a positive integer of at most 100000000 tokens (got 0)',
        [
          ['windowOverrides', 0, 'model'],
          ['windowOverrides', 0, 'window'],
        ],
      ],
      [
        { thresholds: { usageThreshold: 2, systemShrink: 7 } },
        'thresholds.usageThreshold must be a ratio between 0 and 1 (got 2); thresholds.systemShrink must be a ratio between 0 and 1 (got 7)',
        [
          ['thresholds', 'usageThreshold'],
          ['thresholds', 'systemShrink'],
        ],
      ],
      [
        { channels: [{ id: '424242', minSeverity: 'info' }] },
        'channels: unknown channel id 424242',
        [['channels']],
      ],
    ];
    for (const [payload, message, paths] of cases) {
      const res = await put(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json(), JSON.stringify(payload)).toEqual({
        error: 'bad_request',
        message,
        errors: message.split('; '),
        problems: message.split('; ').map((text, i) => ({
          path: ['body', ...paths[i]!],
          message: text,
        })),
      });
    }
    // Shape errors come from the JSON schema, with the field too.
    const shape = await put({ thresholds: { toolShare: 'lots' } });
    expect(shape.statusCode).toBe(400);
    expect(shape.json().problems).toEqual([
      {
        path: ['body', 'thresholds', 'toolShare'],
        message: expect.stringMatching(/^body\/thresholds\/toolShare /),
      },
    ]);
    expect((await put({ enabled: 'maybe' })).statusCode).toBe(400);
    expect((await put({ channels: [{ id: '1', minSeverity: 'loud' }] })).statusCode).toBe(400);
    expect(await get()).toEqual(before);
  });

  it('stores the attached channels', async () => {
    const channel = await store.db
      .insertInto('channels')
      .values({ workspace_id: 'other', type: 'webhook', name: 'hook', config: '{}', secrets: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const id = String(channel.id);
    const res = await put({ channels: [{ id: Number(id), minSeverity: 'critical' }] });
    expect(res.statusCode).toBe(200);
    expect(res.json().channels).toEqual([{ id, minSeverity: 'critical' }]);
    expect((await get()).channels).toEqual([{ id, minSeverity: 'critical' }]);
    // Another workspace's channel cannot be attached.
    const res2 = await app.inject({
      method: 'PUT',
      url: '/api/alerts/context-rot',
      payload: { channels: [{ id, minSeverity: 'info' }] },
    });
    expect(res2.statusCode).toBe(400);
    expect(res2.json().message).toBe(`channels: unknown channel id ${id}`);
  });

  it('declares the scopes: read for GET and the preview (it changes nothing), admin for PUT and acknowledging, ingest for the agent knobs', () => {
    expect(Object.fromEntries([...scopes].filter(([k]) => !k.startsWith('HEAD')))).toEqual({
      'GET /api/findings': 'read',
      'GET /api/findings/:id': 'read',
      'POST /api/findings/:id/acknowledge': 'admin',
      'DELETE /api/findings/:id/acknowledge': 'admin',
      'GET /api/alerts/context-rot': 'read',
      'PUT /api/alerts/context-rot': 'admin',
      'POST /api/alerts/context-rot/preview': 'read',
      // the status line's and guard's knobs, read with the ingest token the hook holds
      'GET /api/agent-knobs': 'ingest',
    });
  });
});
