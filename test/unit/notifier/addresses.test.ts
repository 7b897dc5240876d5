/**
 * Which destinations channels may reach (src/notifier/addresses.ts) and the check taken when
 * a channel is created, changed or tested (src/notifier/destination.ts). Host names are
 * answered by injected resolvers: nothing is looked up.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { checkAddress, checkHostname } from '../../../src/notifier/addresses.ts';
import { checkDestinations } from '../../../src/notifier/destination.ts';
import { resolveAllowed, type Resolver } from '../../../src/notifier/outbound.ts';

const SETTING = 'ROTSCOPE_ALLOW_PRIVATE_ADDRESSES';

/** A resolver answering from a table (unknown names: ENOTFOUND), recording what it was asked. */
function tableResolver(answers: Record<string, string[]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (name: string) => {
    asked.push(name);
    const addresses = answers[name];
    if (!addresses) throw Object.assign(new Error(`${name} not found`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: net.isIP(address) }));
  };
  return Object.assign(resolve, { asked });
}

describe('address classifier', () => {
  it.each([
    // IPv4 ranges that are not globally reachable
    ['0.0.0.0', true],
    ['0.1.2.3', true],
    ['10.1.2.3', true],
    ['100.64.0.1', true],
    ['100.127.255.255', true],
    ['127.0.0.1', true],
    ['127.255.255.254', true],
    ['169.254.169.254', true],
    ['169.254.0.1', true],
    ['172.16.5.4', true],
    ['172.31.255.255', true],
    ['192.0.0.8', true],
    ['192.0.2.1', true],
    ['192.168.1.1', true],
    ['198.18.0.1', true],
    ['198.51.100.7', true],
    ['203.0.113.9', true],
    ['224.0.0.1', true],
    ['239.255.255.250', true],
    ['240.0.0.1', true],
    ['255.255.255.255', true],
    // IPv4 public neighbours of those ranges
    ['8.8.8.8', false],
    ['1.1.1.1', false],
    ['100.128.0.1', false],
    ['169.255.0.1', false],
    ['172.32.0.1', false],
    ['192.0.3.1', false],
    ['198.20.0.1', false],
    ['223.255.255.255', false],
    // IPv6 ranges
    ['::', true],
    ['::1', true],
    ['0:0:0:0:0:0:0:1', true],
    ['fe80::1', true],
    ['fe80::1%eth0', true],
    ['fd00:ec2::254', true],
    ['fc00::1', true],
    ['fec0::1', true],
    ['ff02::1', true],
    ['100::1', true],
    ['2001:db8::1', true],
    ['2606:4700:4700::1111', false],
    ['2001:4860:4860::8888', false],
    // IPv4-compatible ::a.b.c.d
    ['::a9fe:a9fe', true],
    ['::169.254.169.254', true],
    ['::7f00:1', true],
    ['::808:808', false],
    // IPv4-mapped ::ffff:a.b.c.d
    ['::ffff:169.254.169.254', true],
    ['::ffff:a9fe:a9fe', true],
    ['::ffff:127.0.0.1', true],
    ['0:0:0:0:0:ffff:7f00:1', true],
    ['::ffff:8.8.8.8', false],
    // IPv4-translated ::ffff:0:a.b.c.d
    ['::ffff:0:a9fe:a9fe', true],
    ['::ffff:0:169.254.169.254', true],
    ['::ffff:0:a00:1', true],
    ['::ffff:0:808:808', false],
    // 6to4: the IPv4 address in bits 16-47
    ['2002:a9fe:a9fe::1', true],
    ['2002:7f00:1::', true],
    ['2002:a00:1:1234::1', true],
    ['2002:c0a8:101::1', true],
    ['2002:808:808::1', false],
    // NAT64: well-known prefix judged by the embedded address; local-use prefix refused whole
    ['64:ff9b::a9fe:a9fe', true],
    ['64:ff9b::10.0.0.1', true],
    ['64:ff9b::7f00:1', true],
    ['64:ff9b::808:808', false],
    ['64:ff9b:1::1', true],
    ['64:ff9b:1:ffff::a9fe:a9fe', true],
    ['64:ff9b:1::808:808', true],
  ])('%s refused: %s', (address, refused) => {
    const reason = checkAddress(address, false);
    expect(reason !== undefined).toBe(refused);
    if (reason) expect(reason).toContain(SETTING);
    expect(checkAddress(address, true)).toBeUndefined();
  });

  it('says when something is not an address', () => {
    expect(checkAddress('example.com', false)).toBe('not an IP address: example.com');
    expect(checkAddress('127.1', false)).toBe('not an IP address: 127.1');
  });

  it('refuses loopback and metadata names and bracketed addresses unless allowed', () => {
    for (const host of [
      'metadata.google.internal',
      'METADATA.GOOGLE.INTERNAL.',
      'localhost',
      'a.localhost',
      '[fe80::1]',
      '[::ffff:a9fe:a9fe]',
      '[2002:a9fe:a9fe::]',
    ]) {
      expect(checkHostname(host, false), host).toContain(SETTING);
      expect(checkHostname(host, true), host).toBeUndefined();
    }
    expect(checkHostname('hooks.slack.com', false)).toBeUndefined();
    expect(checkHostname('[2606:4700:4700::1111]', false)).toBeUndefined();
  });
});

describe('resolving for a send', () => {
  it('refuses a name when any address it resolves to is refused', async () => {
    const resolve = tableResolver({
      'smtp.internal.test': ['10.0.0.25'],
      'mixed.test': ['93.184.215.14', '::ffff:0:a9fe:a9fe'],
      'public.test': ['93.184.215.14'],
    });
    expect(await resolveAllowed('smtp.internal.test', false, resolve)).toEqual({
      ok: false,
      blocked: true,
      error: expect.stringMatching(/^smtp\.internal\.test: address 10\.0\.0\.25 is private/),
    });
    expect(await resolveAllowed('mixed.test', false, resolve)).toMatchObject({
      ok: false,
      blocked: true,
    });
    expect(await resolveAllowed('public.test', false, resolve)).toEqual({
      ok: true,
      address: '93.184.215.14',
    });
    expect(await resolveAllowed('smtp.internal.test', true, resolve)).toEqual({
      ok: true,
      address: '10.0.0.25',
    });
    expect(await resolveAllowed('gone.test', false, resolve)).toEqual({
      ok: false,
      blocked: false,
      error: 'gone.test: ENOTFOUND: gone.test not found',
    });
    // Literal addresses are judged without a lookup.
    expect(await resolveAllowed('169.254.169.254', false, resolve)).toMatchObject({
      blocked: true,
    });
    expect(resolve.asked).toEqual([
      'smtp.internal.test',
      'mixed.test',
      'public.test',
      'smtp.internal.test',
      'gone.test',
    ]);
  });
});

describe('destination check at creation', () => {
  const resolve = tableResolver({
    'hooks.internal.test': ['10.0.0.5'],
    'hooks.partner.test': ['93.184.215.14', '2606:4700:4700::1111'],
    'mail.internal.test': ['fd12:3456::25'],
  });

  it.each([
    [
      { url: 'http://169.254.169.254/latest' },
      /^Webhook URL: address 169\.254\.169\.254 is private/,
    ],
    [{ url: 'http://[::a9fe:a9fe]/' }, /^Webhook URL: address ::a9fe:a9fe is private/],
    [{ url: 'https://localhost:8443/' }, /^Webhook URL: host localhost is loopback/],
    [
      { url: 'https://hooks.internal.test/x' },
      /^Webhook URL: hooks\.internal\.test: address 10\.0\.0\.5/,
    ],
    [{ webhookUrl: 'https://metadata.google.internal/' }, /^Slack webhook URL: host metadata/],
    [{ host: 'mail.internal.test', port: 25 }, /^SMTP host: mail\.internal\.test: address fd12/],
    [{ host: '192.168.1.25', port: 25 }, /^SMTP host: address 192\.168\.1\.25/],
  ])('refuses %j naming the setting', async (config, message) => {
    const refused = await checkDestinations(config, { allowPrivate: false, resolve });
    expect(refused?.message).toMatch(message);
    expect(refused?.message).toContain(`${SETTING}=true`);
    expect(refused?.message).toContain('config.allowPrivateAddress: true');
    expect(refused?.path).toEqual([Object.keys(config)[0]]);
    expect(await checkDestinations(config, { allowPrivate: true, resolve })).toBeUndefined();
    // The channel's own switch allows it too, without asking the resolver.
    const counting = tableResolver({});
    const allowed = { ...config, allowPrivateAddress: true };
    expect(await checkDestinations(allowed, { allowPrivate: false, resolve: counting })).toBe(
      undefined,
    );
    expect(counting.asked).toEqual([]);
  });

  it('accepts public destinations, and names that do not resolve now', async () => {
    for (const config of [
      { url: 'https://hooks.partner.test/x' },
      { webhookUrl: 'https://[2606:4700:4700::1111]/' },
      { url: 'https://unknown.test/' },
      { url: 'not a url' },
      { name: 'only a name' },
    ]) {
      expect(
        await checkDestinations(config, { allowPrivate: false, resolve }),
        JSON.stringify(config),
      ).toBeUndefined();
    }
  });

  it('gives a name that does not answer in time the benefit of the doubt', async () => {
    const hanging: Resolver = () => new Promise(() => {});
    const started = Date.now();
    expect(
      await checkDestinations(
        { url: 'https://slow.test/' },
        { allowPrivate: false, resolve: hanging, timeoutMs: 100 },
      ),
    ).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('resolves nothing when private destinations are allowed', async () => {
    const counting = tableResolver({});
    await checkDestinations(
      { url: 'https://hooks.internal.test/' },
      { allowPrivate: true, resolve: counting },
    );
    expect(counting.asked).toEqual([]);
  });
});
