/**
 * The test network guard (test/helpers/network-guard.mjs) holds in every test worker and in
 * Node children: lookups of public names and connections to non-loopback addresses fail with
 * the guard's error before anything is sent; loopback still works. Every refused target here
 * is refused by the guard itself, so nothing leaves the machine even while it is checked.
 */
import { execFileSync, spawn } from 'node:child_process';
import dns from 'node:dns';
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Not imported from the guard module: importing it would install it, and this file checks that
// vitest.config.ts (setupFiles) already did.
const GUARD_CODE = 'ERR_TEST_NETWORK_GUARD';
const isNetworkGuardInstalled = () =>
  (globalThis as Record<symbol, unknown>)[Symbol.for('rotscope.test.networkGuard')] === true;

/** The error an emitter fails with. */
function failure(emitter: NodeJS.EventEmitter): Promise<NodeJS.ErrnoException> {
  return new Promise((resolve) => emitter.once('error', resolve));
}

/** A child script that reports whether the guard is loaded, then what a lookup comes to. */
const CHILD_SCRIPT = `
const loaded = globalThis[Symbol.for('rotscope.test.networkGuard')] === true;
if (!loaded) console.log('unguarded');
else require('node:dns').lookup('example.com', (error) => console.log(error ? error.code : 'resolved'));
`;

describe('test network guard', () => {
  let server: http.Server;
  let port: number;

  beforeAll(async () => {
    // Without the guard the checks below would dial out: stop before any of them runs.
    if (!isNetworkGuardInstalled()) throw new Error('network guard not loaded (setupFiles)');
    server = http.createServer((_request, response) => response.end('loopback'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  it('refuses DNS lookups and queries for public names', async () => {
    await expect(dns.promises.lookup('example.com')).rejects.toMatchObject({ code: GUARD_CODE });
    await expect(dns.promises.lookup('hooks.slack.com', { all: true })).rejects.toMatchObject({
      code: GUARD_CODE,
    });
    const callback = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      dns.lookup('example.com', (error) => resolve(error)),
    );
    expect(callback?.code).toBe(GUARD_CODE);
    // c-ares queries go to a name server even for localhost: all refused.
    await expect(dns.promises.resolve4('localhost')).rejects.toMatchObject({ code: GUARD_CODE });
    await expect(new dns.promises.Resolver().resolveTxt('example.com')).rejects.toMatchObject({
      code: GUARD_CODE,
    });
    await expect(dns.promises.reverse('8.8.8.8')).rejects.toMatchObject({ code: GUARD_CODE });
  });

  it('refuses a connection to a non-loopback address before a socket exists', async () => {
    for (const host of ['10.255.255.1', '192.0.2.1', '169.254.169.254', '2001:db8::1']) {
      const socket = net.connect({ host, port: 9 });
      // No TCP handle was made: no packet can have been sent.
      expect((socket as unknown as { _handle: unknown })._handle, host).toBeNull();
      expect((await failure(socket)).code, host).toBe(GUARD_CODE);
    }
  });

  it('refuses names whose lookup answers a non-loopback address, whoever answers', async () => {
    const socket = net.connect({
      host: 'relay.test',
      port,
      lookup: (_name, options, callback) =>
        options.all
          ? callback(null, [{ address: '10.0.0.1', family: 4 }])
          : callback(null, '10.0.0.1', 4),
    });
    const error = await failure(socket);
    expect(error.code).toBe(GUARD_CODE);
    expect(error.message).toContain('relay.test');
  });

  it('refuses tls, http and fetch to public hosts', async () => {
    expect((await failure(tls.connect({ host: 'example.com', port: 443 }))).code).toBe(GUARD_CODE);
    expect((await failure(http.get('http://example.com/'))).code).toBe(GUARD_CODE);
    const fetched = await fetch('https://hooks.slack.com/services/x').catch((e: Error) => e);
    expect((fetched as Error & { cause?: { code?: string } }).cause?.code).toBe(GUARD_CODE);
    const byAddress = await fetch('http://93.184.215.14/').catch((e: Error) => e);
    expect((byAddress as Error & { cause?: { code?: string } }).cause?.code).toBe(GUARD_CODE);
  });

  it('lets loopback through: 127.0.0.1, localhost and a lookup that answers loopback', async () => {
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('loopback');
    expect(await (await fetch(`http://localhost:${port}/`)).text()).toBe('loopback');
    expect(await dns.promises.lookup('localhost', { family: 4 })).toEqual({
      address: '127.0.0.1',
      family: 4,
    });
    const socket = net.connect({
      host: 'receiver.test',
      port,
      lookup: (_name, options, callback) =>
        options.all
          ? callback(null, [{ address: '127.0.0.1', family: 4 }])
          : callback(null, '127.0.0.1', 4),
    });
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.destroy();
  });

  it('is loaded into Node child processes, with their own environment or the inherited one', async () => {
    // An environment built from nothing still gets the guard.
    const explicit = execFileSync(process.execPath, ['-e', CHILD_SCRIPT], {
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(explicit.toString().trim()).toBe(GUARD_CODE);
    const child = spawn(process.execPath, ['-e', CHILD_SCRIPT], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await new Promise((resolve) => child.on('close', resolve));
    expect(output.trim()).toBe(GUARD_CODE);
  });
});
