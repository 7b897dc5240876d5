/**
 * What an admin meets configuring channels through the real API of a real server: a private
 * destination allowed for one channel (`config.allowPrivateAddress: true`) without a restart,
 * while every other channel is still refused with a message that says how to allow it; Slack
 * channels take only Slack's incoming-webhook URLs; refused configurations are explained in
 * the form's words, never as internal paths. Host names are answered by an injected resolver;
 * nothing is sent anywhere but to loopback receivers.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resolver } from '../../../src/notifier/outbound.ts';
import { startHttpReceiver, type HttpReceiver } from '../../helpers/http-receiver.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp.ts';

type Body = Record<string, unknown> & {
  message?: string;
  problems?: Array<{ path: unknown[]; message: string }>;
};

describe('channel settings through the API', () => {
  let server: TestServer;
  let receiver: HttpReceiver;
  let smtp: SmtpSink;
  const asked: string[] = [];
  const answers: Record<string, string[]> = {
    'hooks.internal.test': ['10.0.0.5'],
    'hooks.slack.com': ['52.0.0.10'],
  };
  const resolveHost: Resolver = async (name) => {
    asked.push(name);
    const addresses = answers[name];
    if (!addresses) throw Object.assign(new Error(`${name} not found`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: net.isIP(address) }));
  };

  async function call(method: string, path: string, body?: unknown) {
    const response = await fetch(`${server.url}${path}`, {
      method,
      ...(body !== undefined
        ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
        : {}),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as Body };
  }

  beforeAll(async () => {
    receiver = await startHttpReceiver();
    smtp = await startSmtpSink();
    // The server-wide switch stays off, as by default.
    server = await startTestServer({ loops: false, resolveHost });
    expect(server.config.allowPrivateAddresses).toBe(false);
  }, 180_000);
  afterAll(async () => {
    await Promise.all([server?.close(), receiver?.close(), smtp?.close()]);
  });

  it('documents config.allowPrivateAddress in the OpenAPI of POST /api/channels', async () => {
    type Schema = { type?: string; description?: string; properties?: Record<string, Schema> };
    const document = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<string, { requestBody: { content: Record<string, { schema: Schema }> } }>
      >;
    };
    for (const [path, method] of [
      ['/api/channels', 'post'],
      ['/api/channels/{id}', 'patch'],
    ] as const) {
      const body = document.paths[path]?.[method]?.requestBody.content['application/json']?.schema;
      const field = body?.properties?.config?.properties?.allowPrivateAddress;
      expect(field, `${method} ${path}`).toBeDefined();
      expect(JSON.stringify(field)).toContain('boolean');
      expect(JSON.stringify(field)).toContain('ROTSCOPE_ALLOW_PRIVATE_ADDRESSES=true');
    }
  });

  it('refuses a loopback webhook by default, saying how to allow it for the channel or the server', async () => {
    const refused = await call('POST', '/api/channels', {
      type: 'webhook',
      name: 'local',
      config: { url: `${receiver.url}/hook` },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/^Webhook URL: address 127\.0\.0\.1 is private/);
    expect(refused.body.message).toContain('config.allowPrivateAddress: true');
    expect(refused.body.message).toContain('ROTSCOPE_ALLOW_PRIVATE_ADDRESSES=true');
    expect(refused.body.problems).toEqual([
      { path: ['body', 'config', 'url'], message: refused.body.message },
    ]);
    expect((await call('GET', '/api/channels')).body.items).toEqual([]);
  });

  it('lets one webhook channel reach a loopback receiver once an admin allows it, and no other', async () => {
    const created = await call('POST', '/api/channels', {
      type: 'webhook',
      name: 'local',
      config: { url: `${receiver.url}/hook`, allowPrivateAddress: true },
    });
    expect(created.status).toBe(201);
    expect(created.body.config).toMatchObject({ allowPrivateAddress: true });
    const id = String(created.body.id);
    expect((await call('GET', `/api/channels/${id}`)).body.config).toMatchObject({
      url: `${receiver.url}/hook`,
      allowPrivateAddress: true,
    });

    // The test message goes out through the sender the delivery loop uses.
    const tested = await call('POST', `/api/channels/${id}/test`);
    expect(tested.status).toBe(200);
    expect(tested.body).toMatchObject({ ok: true, code: 200 });
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]?.path).toBe('/hook');

    // Changing its URL to another private address is fine for this channel...
    const moved = await call('PATCH', `/api/channels/${id}`, {
      config: { url: `${receiver.url}/other` },
    });
    expect(moved.status).toBe(200);
    // ...but taking the permission away while the URL is private is refused, and changes nothing.
    for (const off of [false, null]) {
      const revoked = await call('PATCH', `/api/channels/${id}`, {
        config: { allowPrivateAddress: off },
      });
      expect(revoked.status, String(off)).toBe(400);
      expect(revoked.body.message).toMatch(/^Webhook URL: address 127\.0\.0\.1/);
    }
    expect((await call('GET', `/api/channels/${id}`)).body.config).toMatchObject({
      url: `${receiver.url}/other`,
      allowPrivateAddress: true,
    });

    // GET's answer sent back as a PATCH keeps the permission (the round trip of every resource).
    const got = (await call('GET', `/api/channels/${id}`)).body;
    expect((await call('PATCH', `/api/channels/${id}`, got)).status).toBe(200);

    // Another channel on the same server is still refused.
    const other = await call('POST', '/api/channels', {
      type: 'webhook',
      name: 'other',
      config: { url: `${receiver.url}/hook` },
    });
    expect(other.status).toBe(400);
  });

  it('allows a name that resolves to a private address without asking the resolver', async () => {
    const before = asked.length;
    const created = await call('POST', '/api/channels', {
      type: 'webhook',
      name: 'internal',
      config: { url: 'https://hooks.internal.test/x', allowPrivateAddress: true },
    });
    expect(created.status).toBe(201);
    expect(asked.length).toBe(before);
    const refused = await call('POST', '/api/channels', {
      type: 'webhook',
      name: 'internal',
      config: { url: 'https://hooks.internal.test/x' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain('hooks.internal.test: address 10.0.0.5');
    expect(asked.slice(before)).toEqual(['hooks.internal.test']);
  });

  it('lets an email channel use a loopback SMTP relay once allowed', async () => {
    const config = {
      host: '127.0.0.1',
      port: smtp.port,
      secure: false,
      from: 'rotscope@example.com',
      to: ['oncall@example.com'],
    };
    const refused = await call('POST', '/api/channels', { type: 'email', name: 'mail', config });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/^SMTP host: address 127\.0\.0\.1/);
    const created = await call('POST', '/api/channels', {
      type: 'email',
      name: 'mail',
      config: { ...config, allowPrivateAddress: true },
    });
    expect(created.status).toBe(201);
    const tested = await call('POST', `/api/channels/${String(created.body.id)}/test`);
    expect(tested.body).toMatchObject({ ok: true });
    expect(smtp.messages).toHaveLength(1);
  });

  it('takes only Slack incoming-webhook URLs for a Slack channel, saying so', async () => {
    for (const webhookUrl of [
      'https://example.com/services/T/B/x',
      'http://hooks.slack.com/services/T/B/x',
      'https://hooks.slack.com.evil.test/services/T/B/x',
      `${receiver.url}/services/T/B/x`,
    ]) {
      const refused = await call('POST', '/api/channels', {
        type: 'slack',
        name: 'slack',
        config: { webhookUrl },
      });
      expect(refused.status, webhookUrl).toBe(400);
      expect(refused.body.message, webhookUrl).toContain('https://hooks.slack.com/');
      expect(refused.body.problems?.[0]?.path).toEqual(['body', 'config', 'webhookUrl']);
    }
    const created = await call('POST', '/api/channels', {
      type: 'slack',
      name: 'slack',
      config: { webhookUrl: 'https://hooks.slack.com/services/T000/B000/XXXX' },
    });
    expect(created.status).toBe(201);
    const id = String(created.body.id);
    const moved = await call('PATCH', `/api/channels/${id}`, {
      config: { webhookUrl: 'https://example.com/services/T/B/x' },
    });
    expect(moved.status).toBe(400);
    expect(moved.body.message).toContain('https://hooks.slack.com/');
    const permission = await call('POST', '/api/channels', {
      type: 'slack',
      name: 'slack',
      config: { webhookUrl: 'https://hooks.slack.com/services/T/B/x', allowPrivateAddress: true },
    });
    expect(permission.status).toBe(400);
    expect(permission.body.message).toBe(
      '"allowPrivateAddress" is not a setting of a slack channel',
    );
  });

  it('explains refused configurations in the form’s words, with the field in problems', async () => {
    const email = {
      host: 'smtp.example.com',
      port: 587,
      secure: false,
      from: 'rotscope@example.com',
      to: ['oncall@example.com'],
    };
    const cases: Array<[string, Record<string, unknown>, string, unknown[]]> = [
      [
        'email',
        { ...email, to: ['oncall@example.com', 'not-an-address'] },
        'Email address 2 is not valid',
        ['to', 1],
      ],
      ['email', { ...email, to: [] }, 'Recipients (To) needs at least one address', ['to']],
      ['email', { ...email, from: 'nobody' }, 'From address is not valid', ['from']],
      [
        'email',
        { ...email, port: 0 },
        'SMTP port must be a whole number from 1 to 65535',
        ['port'],
      ],
      [
        'email',
        { ...email, port: '25' },
        'SMTP port must be a whole number from 1 to 65535',
        ['port'],
      ],
      ['email', { ...email, host: undefined }, 'SMTP host is required', ['host']],
      ['webhook', { url: 'ftp://example.com' }, 'Webhook URL must be an http(s) URL', ['url']],
      ['webhook', {}, 'Webhook URL is required', ['url']],
      [
        'webhook',
        { url: 'https://example.com', secret: 'whsec_short' },
        'Signing secret must be whsec_ followed by 24 to 64 base64-encoded bytes',
        ['secret'],
      ],
      [
        'webhook',
        { url: 'https://example.com', headers: { 'webhook-id': 'x' } },
        'Header "webhook-id" is set by rotscope itself and cannot be overridden',
        ['headers', 'webhook-id'],
      ],
      [
        'webhook',
        { url: 'https://example.com', colour: 'red' },
        '"colour" is not a setting of a webhook channel',
        [],
      ],
    ];
    for (const [type, config, message, path] of cases) {
      const refused = await call('POST', '/api/channels', { type, name: 'x', config });
      expect(refused.status, message).toBe(400);
      expect(refused.body.message).toBe(message);
      expect(refused.body.message).not.toMatch(/config\.|Invalid|expected/);
      if (path.length > 0)
        expect(refused.body.problems).toEqual([{ path: ['body', 'config', ...path], message }]);
    }
  });
});
