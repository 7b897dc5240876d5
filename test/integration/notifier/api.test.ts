import Fastify, { type FastifyInstance } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWebhookSecret } from '../../../src/notifier/config.ts';
import { channelKeys, startNotifier } from '../../../src/notifier/notifier.ts';
import { channelsRoutes } from '../../../src/api/routes/channels.ts';
import { deliveriesRoutes } from '../../../src/api/routes/deliveries.ts';
import '../../../src/api/types.ts';
import { getAlertChannels, setAlertChannels } from '../../../src/store/alert-channels.ts';
import { getChannelWithSecrets } from '../../../src/store/channels.ts';
import { startHttpReceiver, type HttpReceiver } from '../../helpers/http-receiver.ts';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp.ts';
import { createTestStore, type TestStore } from '../../helpers/store.ts';
import { eventually, FAST, memoryLogger, queueFinding, testConfig } from './fixtures.ts';

describe('channels and deliveries API', () => {
  let store: TestStore;
  let app: FastifyInstance;
  let receiver: HttpReceiver;
  let smtp: SmtpSink;
  const scopes = new Map<string, string | undefined>();
  const config = testConfig();

  beforeAll(async () => {
    store = await createTestStore();
    await store.db.insertInto('workspaces').values({ id: 'other' }).execute();
    receiver = await startHttpReceiver((_request, index) =>
      index === 0 ? { status: 503 } : { status: 200 },
    );
    smtp = await startSmtpSink();
    app = Fastify();
    app.decorateRequest('workspaceId', '');
    // Stands in for the auth hook: the workspace comes from a test header.
    app.addHook('onRequest', async (request) => {
      request.workspaceId = String(request.headers['x-workspace'] ?? 'default');
    });
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) scopes.set(`${method} ${route.url}`, route.config?.scope);
    });
    const deps = { store, config, log: app.log, tokensChanged: () => {} };
    await app.register(channelsRoutes, deps);
    await app.register(deliveriesRoutes, deps);
    await app.ready();
  }, 180_000);
  afterAll(async () => {
    await app.close();
    await receiver.close();
    await smtp.close();
    await store.close();
  });

  it('declares read scope for reads and admin for writes', () => {
    expect(Object.fromEntries([...scopes].filter(([key]) => !key.startsWith('HEAD')))).toEqual({
      'GET /api/secrets': 'admin',
      'GET /api/channels': 'read',
      'GET /api/channels/:id': 'read',
      'POST /api/channels': 'admin',
      'PATCH /api/channels/:id': 'admin',
      'DELETE /api/channels/:id': 'admin',
      'POST /api/channels/:id/test': 'admin',
      'GET /api/deliveries': 'read',
    });
  });

  it('creates a webhook channel, returns the generated secret once and never again', async () => {
    const created = await app.inject({
      method: 'POST',
      url: '/api/channels',
      payload: {
        type: 'webhook',
        name: 'ops hook',
        config: { url: `${receiver.url}/hook`, headers: { 'X-Api-Key': 'hunter2' } },
      },
    });
    expect(created.statusCode).toBe(201);
    const body = created.json<{ id: string; secret: string; config: Record<string, unknown> }>();
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(body.config).toEqual({ url: `${receiver.url}/hook`, headerNames: ['X-Api-Key'] });
    expect(created.body).not.toContain('hunter2');

    const read = await app.inject({ method: 'GET', url: `/api/channels/${body.id}` });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ id: body.id, type: 'webhook', name: 'ops hook' });
    expect(read.body).not.toContain(body.secret);
    expect(read.body).not.toContain('hunter2');
    expect(read.json()).not.toHaveProperty('secret');
    const list = await app.inject({ method: 'GET', url: '/api/channels' });
    expect(list.body).not.toContain(body.secret.slice(6));
    expect(list.body).not.toContain('hunter2');

    // The test message is signed with that secret and carries the custom header.
    const tested = await app.inject({ method: 'POST', url: `/api/channels/${body.id}/test` });
    expect(tested.statusCode).toBe(200);
    expect(tested.json()).toMatchObject({
      ok: false,
      status: 'retry',
      code: 503,
      error: 'HTTP 503',
    });
    const again = await app.inject({ method: 'POST', url: `/api/channels/${body.id}/test` });
    expect(again.json()).toMatchObject({ ok: true, status: 'ok', code: 200 });
    const request = receiver.requests.at(-1)!;
    expect(request.headers['x-api-key']).toBe('hunter2');
    const verified = new Webhook(body.secret).verify(request.body, {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    });
    expect(verified).toMatchObject({
      type: 'test',
      data: { severity: 'warning', workspaceName: 'default' },
    });
    expect(request.headers['webhook-id']).toBe(again.json<{ messageId: string }>().messageId);
  });

  it('keeps secrets of Slack and email channels write-only', async () => {
    const secret = generateWebhookSecret();
    const hook = await app.inject({
      method: 'POST',
      url: '/api/channels',
      payload: {
        type: 'webhook',
        name: 'given secret',
        config: { url: 'https://example.com/h', secret },
      },
    });
    expect(hook.json()).toMatchObject({ secret });
    const slack = await app.inject({
      method: 'POST',
      url: '/api/channels',
      payload: {
        type: 'slack',
        name: 'alerts',
        config: { webhookUrl: 'https://hooks.slack.com/services/T1/B2/very-secret-token' },
      },
    });
    expect(slack.statusCode).toBe(201);
    expect(slack.json()).toMatchObject({ config: { webhookHost: 'hooks.slack.com' } });
    expect(slack.json()).not.toHaveProperty('secret');
    expect(slack.body).not.toContain('very-secret-token');
    const email = await app.inject({
      method: 'POST',
      url: '/api/channels',
      payload: {
        type: 'email',
        name: 'oncall mail',
        config: {
          host: smtp.host,
          port: smtp.port,
          secure: false,
          user: 'bot',
          password: 'smtp-pass-123',
          from: 'rotscope@example.com',
          to: ['oncall@example.com'],
        },
      },
    });
    expect(email.statusCode).toBe(201);
    expect(email.json()).toMatchObject({
      config: {
        host: smtp.host,
        port: smtp.port,
        secure: false,
        user: 'bot',
        to: ['oncall@example.com'],
      },
    });
    const all = await app.inject({ method: 'GET', url: '/api/channels?limit=200' });
    for (const text of [all.body, email.body]) {
      expect(text).not.toContain('smtp-pass-123');
      expect(text).not.toContain('very-secret-token');
      expect(text).not.toContain(secret.slice(6));
    }
  });

  it('rejects invalid configurations with a precise message', async () => {
    const cases: Array<[unknown, number, RegExp]> = [
      [
        { type: 'webhook', name: 'x', config: { url: 'ftp://example.com' } },
        400,
        /^Webhook URL must be an http\(s\) URL$/,
      ],
      [
        { type: 'webhook', name: 'x', config: { url: 'https://e.com', secret: 'whsec_short' } },
        400,
        /^Signing secret must be whsec_/,
      ],
      [
        {
          type: 'webhook',
          name: 'x',
          config: { url: 'https://e.com', headers: { 'webhook-id': 'x' } },
        },
        400,
        /^Header "webhook-id" is set by rotscope itself/,
      ],
      [
        { type: 'webhook', name: 'x', config: { url: 'https://e.com', extra: 1 } },
        400,
        /^"extra" is not a setting of a webhook channel$/,
      ],
      [
        {
          type: 'email',
          name: 'x',
          config: { host: 'h', port: 25, secure: false, from: 'a@b.co', to: [] },
        },
        400,
        /^Recipients \(To\) /,
      ],
      [
        {
          type: 'email',
          name: 'x',
          config: { host: 'h', port: 25, secure: false, from: 'nope', to: ['a@b.co'] },
        },
        400,
        /^From address /,
      ],
      [{ type: 'pager', name: 'x', config: {} }, 400, /type/],
      [
        { type: 'slack', name: '', config: { webhookUrl: 'https://hooks.slack.com/x' } },
        400,
        /name/,
      ],
    ];
    for (const [payload, status, message] of cases) {
      const response = await app.inject({
        method: 'POST',
        url: '/api/channels',
        payload: payload as object,
      });
      expect(response.statusCode, JSON.stringify(payload)).toBe(status);
      expect(response.json<{ message: string }>().message, JSON.stringify(payload)).toMatch(
        message,
      );
    }
  });

  it('patches name and configuration, keeping secrets that are not given', async () => {
    const created = await app.inject({
      method: 'POST',
      url: '/api/channels',
      payload: {
        type: 'webhook',
        name: 'before',
        config: { url: 'https://a.example.com', headers: { 'X-A': '1' } },
      },
    });
    const { id, secret } = created.json<{ id: string; secret: string }>();
    const patched = await app.inject({
      method: 'PATCH',
      url: `/api/channels/${id}`,
      payload: { name: 'after', config: { url: 'https://b.example.com', headers: null } },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({
      name: 'after',
      config: { url: 'https://b.example.com', headerNames: [] },
    });
    expect(patched.body).not.toContain(secret.slice(6));
    // sealed at rest (src/secrets/keyring.ts): the row keeps no plaintext; opened, the signing
    // secret is the one created and the headers are gone
    const row = await store.db
      .selectFrom('channels')
      .select(['secrets', 'secrets_sealed'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.secrets).toEqual({});
    expect(row.secrets_sealed).not.toBeNull();
    const opened = await getChannelWithSecrets(store.db, channelKeys(config), 'default', id);
    expect(opened?.secrets).toEqual({ secret, headers: {} });

    const bad = await app.inject({
      method: 'PATCH',
      url: `/api/channels/${id}`,
      payload: { config: { url: 'nope' } },
    });
    expect(bad.statusCode).toBe(400);
    const empty = await app.inject({ method: 'PATCH', url: `/api/channels/${id}`, payload: {} });
    expect(empty.statusCode).toBe(400);
  });

  it('keeps workspaces apart', async () => {
    const created = await app.inject({
      method: 'POST',
      url: '/api/channels',
      payload: {
        type: 'slack',
        name: 'default only',
        config: { webhookUrl: 'https://hooks.slack.com/x' },
      },
    });
    const { id } = created.json<{ id: string }>();
    const other = { 'x-workspace': 'other' };
    expect(
      (await app.inject({ method: 'GET', url: `/api/channels/${id}`, headers: other })).statusCode,
    ).toBe(404);
    expect(
      (
        await app.inject({
          method: 'PATCH',
          url: `/api/channels/${id}`,
          headers: other,
          payload: { name: 'x' },
        })
      ).statusCode,
    ).toBe(404);
    expect(
      (await app.inject({ method: 'POST', url: `/api/channels/${id}/test`, headers: other }))
        .statusCode,
    ).toBe(404);
    expect(
      (await app.inject({ method: 'DELETE', url: `/api/channels/${id}`, headers: other }))
        .statusCode,
    ).toBe(404);
    expect(
      (await app.inject({ method: 'GET', url: '/api/channels', headers: other })).json(),
    ).toEqual({
      items: [],
      next: null,
    });
    // The alert of another workspace cannot attach this channel.
    expect(await setAlertChannels(store.db, 'other', [{ id, minSeverity: 'warning' }])).toEqual({
      ok: false,
      error: `unknown channel id ${id}`,
    });
    expect(
      await setAlertChannels(store.db, 'default', [{ id: '999999', minSeverity: 'warning' }]),
    ).toEqual({
      ok: false,
      error: 'unknown channel id 999999',
    });
    expect(
      await setAlertChannels(store.db, 'default', [
        { id, minSeverity: 'warning' },
        { id, minSeverity: 'info' },
      ]),
    ).toEqual({ ok: false, error: `channel ${id} listed twice` });
    expect(await setAlertChannels(store.db, 'default', [{ id, minSeverity: 'critical' }])).toEqual({
      ok: true,
    });
    expect(await getAlertChannels(store.db, 'default')).toEqual([{ id, minSeverity: 'critical' }]);
    expect(await getAlertChannels(store.db, 'other')).toEqual([]);

    const deleted = await app.inject({ method: 'DELETE', url: `/api/channels/${id}` });
    expect(deleted.statusCode).toBe(204);
    expect((await app.inject({ method: 'GET', url: `/api/channels/${id}` })).statusCode).toBe(404);
    expect(await getAlertChannels(store.db, 'default')).toEqual([]);
  });

  it('pages through channels with a cursor', async () => {
    const seen: string[] = [];
    let url = '/api/channels?limit=2';
    for (let page = 0; page < 50; page++) {
      const body = (await app.inject({ method: 'GET', url })).json<{
        items: Array<{ id: string }>;
        next: string | null;
      }>();
      expect(body.items.length).toBeLessThanOrEqual(2);
      seen.push(...body.items.map((item) => item.id));
      if (body.next === null) break;
      url = `/api/channels?limit=2&cursor=${body.next}`;
    }
    const all = await store.db
      .selectFrom('channels')
      .select('id')
      .where('workspace_id', '=', 'default')
      .execute();
    expect(seen.length).toBeGreaterThan(2);
    expect(seen).toEqual(all.map((row) => String(row.id)).sort((a, b) => Number(a) - Number(b)));
  });

  it('lists deliveries with their attempts, by finding and by channel, page by page', async () => {
    const endpoint = await startHttpReceiver((_request, index) =>
      index === 0 ? { status: 500, body: 'oops' } : { status: 200 },
    );
    try {
      const ids: string[] = [];
      for (const name of ['d1', 'd2', 'd3']) {
        const created = await app.inject({
          method: 'POST',
          url: '/api/channels',
          payload: { type: 'webhook', name, config: { url: endpoint.url } },
        });
        ids.push(created.json<{ id: string }>().id);
      }
      const findingId = await queueFinding(store.db, ids);
      const notifier = startNotifier({ store, config, log: memoryLogger(), ...FAST });
      try {
        await eventually(async () => {
          const body = (
            await app.inject({ method: 'GET', url: `/api/deliveries?findingId=${findingId}` })
          ).json<{ items: Array<{ status: string }> }>();
          return body.items.length === 3 && body.items.every((item) => item.status === 'delivered');
        });
      } finally {
        await notifier.stop();
      }
      const byFinding = (
        await app.inject({ method: 'GET', url: `/api/deliveries?findingId=${findingId}` })
      ).json<{
        items: Array<Record<string, unknown> & { attempts: Array<Record<string, unknown>> }>;
      }>();
      const retried = byFinding.items.find((item) => item.attemptCount === 2);
      expect(retried).toMatchObject({
        findingId,
        event: 'created',
        status: 'delivered',
        nextAttemptAt: null,
        lastError: null,
        deliveredAt: expect.any(String),
      });
      expect(retried?.attempts).toMatchObject([
        {
          statusCode: 500,
          error: 'HTTP 500: oops',
          outcome: 'retry',
          durationMs: expect.any(Number),
        },
        { statusCode: 200, error: null, outcome: 'delivered' },
      ]);

      const byChannel = (
        await app.inject({ method: 'GET', url: `/api/deliveries?channelId=${ids[1]}` })
      ).json<{
        items: Array<{ channelId: string }>;
      }>();
      expect(byChannel.items.map((item) => item.channelId)).toEqual([ids[1]]);

      // Three rows made in one transaction share created_at: the cursor still walks them all.
      const walked: string[] = [];
      let url = `/api/deliveries?findingId=${findingId}&limit=1`;
      for (let page = 0; page < 10; page++) {
        const body = (await app.inject({ method: 'GET', url })).json<{
          items: Array<{ id: string }>;
          next: string | null;
        }>();
        walked.push(...body.items.map((item) => item.id));
        if (body.next === null) break;
        url = `/api/deliveries?findingId=${findingId}&limit=1&cursor=${body.next}`;
      }
      expect(walked).toHaveLength(3);
      expect(new Set(walked).size).toBe(3);

      expect(
        (await app.inject({ method: 'GET', url: '/api/deliveries?cursor=garbage' })).statusCode,
      ).toBe(400);
      expect(
        (await app.inject({ method: 'GET', url: '/api/deliveries?findingId=abc' })).statusCode,
      ).toBe(400);
      const other = await app.inject({
        method: 'GET',
        url: `/api/deliveries?findingId=${findingId}`,
        headers: { 'x-workspace': 'other' },
      });
      expect(other.json()).toEqual({ items: [], next: null });
    } finally {
      await endpoint.close();
    }
  });
});
