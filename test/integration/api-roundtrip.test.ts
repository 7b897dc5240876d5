/**
 * Every resource accepts back what it returned (DESIGN §8): GET, then PUT/PATCH the very body,
 * on the real app over a real store. Read-only fields are ignored, unknown ones refused with
 * a 400 naming them. The resources with a GET and a PUT/PATCH are read from the OpenAPI
 * document, so a new one fails here until it has a round trip.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/api/app.ts';
import { defaultConfig } from '../../src/config.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

let store: TestStore;
let built: App;

beforeAll(async () => {
  store = await createTestStore();
  // Private destinations allowed: nothing is resolved when channels are created (no DNS).
  built = await buildApp({ store, config: defaultConfig({ allowPrivateAddresses: true }) });
  await built.app.ready();
}, 120_000);
afterAll(async () => {
  await built?.app.close();
  await store?.close();
});

const inject = (method: 'GET' | 'PUT' | 'PATCH' | 'POST', url: string, payload?: unknown) =>
  built.app.inject({
    method,
    url,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

/** The paths of the resources covered below, in OpenAPI form. */
const COVERED = ['/api/alerts/context-rot', '/api/channels/{id}'];

it('covers every resource with a GET and a PUT or PATCH', async () => {
  const doc = (await inject('GET', '/api/openapi.json')).json<{
    paths: Record<string, Record<string, unknown>>;
  }>();
  const writable = Object.entries(doc.paths)
    .filter(([, methods]) => 'get' in methods && ('put' in methods || 'patch' in methods))
    .map(([path]) => path)
    .sort();
  expect(writable).toEqual([...COVERED].sort());
});

describe('PUT /api/alerts/context-rot', () => {
  it('accepts what GET returned, updatedAt included, and changes nothing', async () => {
    const channel = await inject('POST', '/api/channels', {
      type: 'webhook',
      name: 'alerts',
      config: { url: 'http://127.0.0.1:9/hook' },
    });
    expect(channel.statusCode).toBe(201);
    // A state with every part filled: an override and an attached channel.
    const set = await inject('PUT', '/api/alerts/context-rot', {
      windowOverrides: [{ model: 'claude-*', window: 500_000 }],
      channels: [{ id: channel.json<{ id: string }>().id, minSeverity: 'warning' }],
    });
    expect(set.statusCode).toBe(200);

    const before = await inject('GET', '/api/alerts/context-rot');
    const body = before.json<Record<string, unknown>>();
    expect(body.updatedAt).toEqual(expect.any(String));
    // A read-only field the console shows beside each knob; sent back, it is ignored.
    expect(body.defaults).toEqual({ thresholds: expect.objectContaining({ usageThreshold: 0.7 }) });
    const put = await inject('PUT', '/api/alerts/context-rot', body);
    expect(put.json()).toMatchObject({ windowOverrides: body.windowOverrides });
    expect(put.statusCode).toBe(200);
    const { updatedAt: _before, ...was } = body;
    const { updatedAt: _after, ...now } = (await inject('GET', '/api/alerts/context-rot')).json<
      Record<string, unknown>
    >();
    expect(now).toEqual(was);
  });

  it('refuses unknown fields at every level, naming them', async () => {
    const body = (await inject('GET', '/api/alerts/context-rot')).json<{
      windowOverrides: object[];
      channels: object[];
    }>();
    const top = await inject('PUT', '/api/alerts/context-rot', { ...body, colour: 'red' });
    expect(top.statusCode).toBe(400);
    expect(top.json<{ message: string }>().message).toContain('colour');
    const nested = await inject('PUT', '/api/alerts/context-rot', {
      ...body,
      windowOverrides: [{ model: 'gpt-*', window: 1000, note: 'x' }],
    });
    expect(nested.statusCode).toBe(400);
    expect(nested.json<{ message: string }>().message).toBe(
      'body/windowOverrides/0/note is not a known field',
    );
  });
});

describe('PATCH /api/channels/:id', () => {
  const configs = {
    webhook: { url: 'http://127.0.0.1:9/hook', headers: { 'X-Team': 'ops' } },
    slack: { webhookUrl: 'https://hooks.slack.com/services/T/B/x' },
    email: {
      host: '127.0.0.1',
      port: 2525,
      secure: false,
      user: 'u',
      password: 'p',
      from: 'rotscope@example.com',
      to: ['oncall@example.com'],
    },
  };

  for (const [type, config] of Object.entries(configs)) {
    it(`accepts what GET returned for a ${type} channel, and keeps its secrets`, async () => {
      const created = await inject('POST', '/api/channels', { type, name: type, config });
      expect(created.statusCode).toBe(201);
      const id = created.json<{ id: string }>().id;
      const secretsBefore = await storedSecrets(id);
      const got = (await inject('GET', `/api/channels/${id}`)).json<Record<string, unknown>>();

      const patched = await inject('PATCH', `/api/channels/${id}`, got);
      expect(patched.json()).toMatchObject({ name: type, config: got.config });
      expect(patched.statusCode).toBe(200);
      const { updatedAt: _was, ...before } = got;
      const { updatedAt: _now, ...after } = (await inject('GET', `/api/channels/${id}`)).json<
        Record<string, unknown>
      >();
      expect(after).toEqual(before);
      expect(await storedSecrets(id)).toEqual(secretsBefore);

      // The list's items are the same resource.
      const listed = (await inject('GET', '/api/channels?limit=200')).json<{
        items: Array<Record<string, unknown>>;
      }>();
      const item = listed.items.find((c) => c.id === id);
      expect((await inject('PATCH', `/api/channels/${id}`, item)).statusCode).toBe(200);
    });
  }

  it('refuses unknown fields and a change of type, naming them', async () => {
    const created = await inject('POST', '/api/channels', {
      type: 'webhook',
      name: 'strict',
      config: configs.webhook,
    });
    const id = created.json<{ id: string }>().id;
    const got = (await inject('GET', `/api/channels/${id}`)).json<Record<string, unknown>>();

    const unknown = await inject('PATCH', `/api/channels/${id}`, { ...got, colour: 'red' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toEqual({
      error: 'bad_request',
      message: 'body/colour is not a known field',
      problems: [{ path: ['body', 'colour'], message: 'body/colour is not a known field' }],
    });
    const unknownConfig = await inject('PATCH', `/api/channels/${id}`, {
      config: { ...(got.config as object), colour: 'red' },
    });
    expect(unknownConfig.statusCode).toBe(400);
    expect(unknownConfig.json<{ message: string }>().message).toContain('colour');
    const retyped = await inject('PATCH', `/api/channels/${id}`, { ...got, type: 'slack' });
    expect(retyped.statusCode).toBe(400);
    expect(retyped.json<{ message: string }>().message).toContain('body/type');
    // Nor does a create drop what it does not know.
    const create = await inject('POST', '/api/channels', {
      type: 'webhook',
      name: 'x',
      config: configs.webhook,
      colour: 'red',
    });
    expect(create.statusCode).toBe(400);
    expect(create.json<{ message: string }>().message).toBe('body/colour is not a known field');
  });
});

async function storedSecrets(id: string): Promise<unknown> {
  const row = await store.db
    .selectFrom('channels')
    .select('secrets')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return row.secrets;
}
