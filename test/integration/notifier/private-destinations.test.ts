/**
 * A channel whose destination every send would refuse (private, loopback, link-local,
 * metadata) is refused when it is created, changed or tested, with a 400 naming
 * ROTSCOPE_ALLOW_PRIVATE_ADDRESSES, through the real API of a real server. Host names are
 * answered by an injected resolver; nothing is sent anywhere but to a loopback receiver.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseNewChannelConfig, toStored } from '../../../src/notifier/config.ts';
import type { Resolver } from '../../../src/notifier/outbound.ts';
import { createChannel } from '../../../src/store/channels.ts';
import { channelKeys } from '../../../src/notifier/notifier.ts';
import { startHttpReceiver, type HttpReceiver } from '../../helpers/http-receiver.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const SETTING = 'ROTSCOPE_ALLOW_PRIVATE_ADDRESSES';

describe('private destinations through the channels API', () => {
  let server: TestServer;
  let allowing: TestServer;
  let receiver: HttpReceiver;
  const asked: string[] = [];
  const answers: Record<string, string[]> = {
    'hooks.internal.test': ['10.0.0.5'],
    'hooks.partner.test': ['93.184.215.14'],
    'smtp.internal.test': ['fd12:3456::25'],
    'loopback.test': ['127.0.0.1'],
  };
  const resolveHost: Resolver = async (name) => {
    asked.push(name);
    const addresses = answers[name];
    if (!addresses) throw Object.assign(new Error(`${name} not found`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: net.isIP(address) }));
  };

  async function call(
    target: TestServer,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${target.url}${path}`, {
      method,
      ...(body !== undefined
        ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
        : {}),
    });
    const text = await response.text();
    return {
      status: response.status,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    };
  }

  beforeAll(async () => {
    receiver = await startHttpReceiver();
    server = await startTestServer({ loops: false, resolveHost });
    allowing = await startTestServer({
      loops: false,
      resolveHost,
      config: { allowPrivateAddresses: true },
    });
  }, 180_000);
  afterAll(async () => {
    await Promise.all([server?.close(), allowing?.close(), receiver?.close()]);
  });

  it('refuses creating channels to private destinations, naming the setting', async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      [
        'webhook',
        { url: 'http://169.254.169.254/latest/meta-data/' },
        'Webhook URL: address 169.254.169.254',
      ],
      ['webhook', { url: 'http://[::a9fe:a9fe]/' }, 'Webhook URL: address ::a9fe:a9fe'],
      [
        'webhook',
        { url: 'http://[::ffff:0:a9fe:a9fe]/' },
        'Webhook URL: address ::ffff:0:a9fe:a9fe',
      ],
      ['webhook', { url: 'http://[2002:a9fe:a9fe::1]/' }, 'Webhook URL: address 2002:a9fe:a9fe::1'],
      ['webhook', { url: 'http://[64:ff9b:1::a00:1]/' }, 'Webhook URL: address 64:ff9b:1::a00:1'],
      ['webhook', { url: `${receiver.url}/hook` }, 'Webhook URL: address 127.0.0.1'],
      [
        'webhook',
        { url: 'https://hooks.internal.test/x' },
        'Webhook URL: hooks.internal.test: address 10.0.0.5',
      ],
      [
        'email',
        { host: 'smtp.internal.test', port: 25, secure: false, from: 'a@b.co', to: ['c@d.co'] },
        'SMTP host: smtp.internal.test: address fd12:3456::25',
      ],
    ];
    for (const [type, config, message] of cases) {
      const created = await call(server, 'POST', '/api/channels', { type, name: 'x', config });
      expect(created.status, JSON.stringify(config)).toBe(400);
      expect(created.body.message, JSON.stringify(config)).toContain(message);
      expect(created.body.message).toContain(`${SETTING}=true`);
    }
    const stored = await server.store.db.selectFrom('channels').select('id').execute();
    expect(stored).toEqual([]);
  });

  it('accepts public destinations and names that do not resolve now, without sending', async () => {
    for (const url of [
      'https://hooks.partner.test/x',
      'https://unresolvable.test/x',
      'https://[2606:4700:4700::1111]/x',
    ]) {
      const created = await call(server, 'POST', '/api/channels', {
        type: 'webhook',
        name: url,
        config: { url },
      });
      expect(created.status, url).toBe(201);
    }
    // Literal addresses are judged without asking the resolver.
    expect(asked).toEqual(expect.arrayContaining(['hooks.partner.test', 'unresolvable.test']));
    expect(asked.filter((name) => net.isIP(name) !== 0)).toEqual([]);
  });

  it('refuses changing a channel to a private destination and keeps the old one', async () => {
    const created = await call(server, 'POST', '/api/channels', {
      type: 'webhook',
      name: 'partner',
      config: { url: 'https://hooks.partner.test/a' },
    });
    const id = String(created.body.id);
    for (const url of ['http://[fd00:ec2::254]/', 'https://loopback.test/', 'http://10.1.2.3/']) {
      const patched = await call(server, 'PATCH', `/api/channels/${id}`, { config: { url } });
      expect(patched.status, url).toBe(400);
      expect(patched.body.message, url).toContain(SETTING);
    }
    const read = await call(server, 'GET', `/api/channels/${id}`);
    expect(read.body.config).toMatchObject({ url: 'https://hooks.partner.test/a' });
    const renamed = await call(server, 'PATCH', `/api/channels/${id}`, { name: 'renamed' });
    expect(renamed.status).toBe(200);
  });

  it('refuses testing a stored channel with a private destination, sending nothing', async () => {
    // A row written before the check existed (or while private addresses were allowed).
    const parsed = parseNewChannelConfig('webhook', { url: `${receiver.url}/legacy` });
    if (!parsed.ok) throw new Error(parsed.error);
    const legacy = await createChannel(server.store.db, channelKeys(server.config), 'default', {
      type: 'webhook',
      name: 'legacy',
      ...toStored(parsed.value.settings),
    });
    const tested = await call(server, 'POST', `/api/channels/${legacy.id}/test`);
    expect(tested.status).toBe(400);
    expect(tested.body.message).toContain('Webhook URL: address 127.0.0.1');
    expect(tested.body.message).toContain(SETTING);
    expect(receiver.requests).toHaveLength(0);
    expect((await call(server, 'POST', '/api/channels/999999/test')).status).toBe(404);
  });

  it('accepts and reaches private destinations when the setting is on', async () => {
    const before = asked.length;
    const created = await call(allowing, 'POST', '/api/channels', {
      type: 'webhook',
      name: 'local',
      config: { url: `${receiver.url}/hook` },
    });
    expect(created.status).toBe(201);
    const internal = await call(allowing, 'POST', '/api/channels', {
      type: 'webhook',
      name: 'internal',
      config: { url: 'https://hooks.internal.test/x' },
    });
    expect(internal.status).toBe(201);
    const tested = await call(allowing, 'POST', `/api/channels/${String(created.body.id)}/test`);
    expect(tested.status).toBe(200);
    expect(tested.body).toMatchObject({ ok: true, code: 200 });
    expect(receiver.requests).toHaveLength(1);
    // Nothing needed resolving: every destination passes.
    expect(asked.length).toBe(before);
  });
});
