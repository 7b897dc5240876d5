/**
 * Every check that depends on the path judges the path the router routes (issue 21, items 1
 * and 2). The router decodes percent-escapes before it matches, so `/%61pi/channels/1/test` is
 * `/api/channels/1/test`. For every operation in the OpenAPI document (and the OTLP routes), a
 * variant with one escaped letter in each fixed segment must get the same answer as the plain
 * path: a cross-site browser request without a CSRF token, a request with no token on a locked
 * server, a request whose Host is not ours on the open one. Real HTTP on loopback.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../src/store/workspaces.ts';
import {
  hostHeaderCount,
  hostName,
  hostRefusal,
  isLoopbackName,
} from '../../src/api/host-guard.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

interface Answer {
  status: number;
  body: string;
}

function send(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: url.hostname, port: url.port, method, path, headers },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    request.on('error', reject);
    if (method !== 'GET' && method !== 'DELETE') {
      request.setHeader('content-type', 'application/json');
      request.end('{}');
    } else request.end();
  });
}

/**
 * The status of a GET written byte for byte on a socket to 127.0.0.1 with `hostLines` as its
 * Host headers: HTTP clients send one Host, well-formed.
 */
function rawStatus(base: string, path: string, hostLines: string[]): Promise<number> {
  const head = [`GET ${path} HTTP/1.1`, ...hostLines.map((h) => `Host: ${h}`), 'Connection: close'];
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(new URL(base).port), '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)));
    // written, not ended: a client that half-closes may be dropped before a slow answer
    // (Connection: close ends the exchange once the answer is sent)
    socket.write(`${head.join('\r\n')}\r\n\r\n`);
  });
}

/** `/api/channels/{id}/test` → `/api/channels/1/test`. */
const concrete = (template: string) => template.replace(/\{[^}]+\}/g, '1');
/** `/api/channels/1/test` → `/%61pi/%63hannels/1/%74est`: each fixed segment's first letter escaped. */
function escaped(template: string): string {
  return template
    .split('/')
    .map((segment) =>
      segment === '' || segment.startsWith('{')
        ? segment
        : `%${segment.charCodeAt(0).toString(16)}${segment.slice(1)}`,
    )
    .join('/')
    .replace(/\{[^}]+\}/g, '1');
}

describe('checks judge the routed path', () => {
  let open: TestServer;
  let locked: TestServer;
  let operations: Array<{ method: string; template: string }>;

  beforeAll(async () => {
    [open, locked] = await Promise.all([
      startTestServer({ loops: false }),
      startTestServer({ loops: false }),
    ]);
    await createToken(locked.store.db, 'default', 'admin');
    const document = JSON.parse((await send(open.url, 'GET', '/api/openapi.json')).body) as {
      paths: Record<string, Record<string, unknown>>;
    };
    operations = Object.entries(document.paths).flatMap(([template, methods]) =>
      Object.keys(methods).map((method) => ({ method: method.toUpperCase(), template })),
    );
    operations.push(
      { method: 'POST', template: '/v1/traces' },
      { method: 'POST', template: '/v1/logs' },
      { method: 'POST', template: '/api/session' },
      { method: 'DELETE', template: '/api/session' },
    );
  }, 120_000);
  afterAll(async () => {
    await open?.close();
    await locked?.close();
  });

  it('walks a real document', () => {
    expect(operations.length).toBeGreaterThan(20);
    expect(escaped('/api/channels/{id}/test')).toBe('/%61pi/%63hannels/1/%74est');
  });

  it('refuses a cross-site request without a CSRF token under every spelling of its path', async () => {
    const unsafe = operations.filter(
      (operation) => operation.method !== 'GET' && !operation.template.startsWith('/v1/'),
    );
    expect(unsafe.length).toBeGreaterThan(8);
    for (const { method, template } of unsafe) {
      const headers = { 'sec-fetch-site': 'cross-site' };
      const plain = await send(open.url, method, concrete(template), headers);
      const variant = await send(open.url, method, escaped(template), headers);
      expect({ method, template, status: plain.status }).toEqual({ method, template, status: 403 });
      expect({ method, template, status: variant.status }).toEqual({
        method,
        template,
        status: 403,
      });
    }
  });

  it('asks for a token on a locked server under every spelling of its path', async () => {
    for (const { method, template } of operations) {
      const plain = await send(locked.url, method, concrete(template));
      const variant = await send(locked.url, method, escaped(template));
      expect({ method, template, status: variant.status }).toEqual({
        method,
        template,
        status: plain.status,
      });
    }
  });

  it('refuses a Host that is not ours on the open server, on every route and spelling', async () => {
    for (const { method, template } of operations) {
      for (const path of [concrete(template), escaped(template)]) {
        const answer = await send(open.url, method, path, { host: 'attacker.example:4318' });
        expect({ method, path, status: answer.status }).toEqual({ method, path, status: 403 });
      }
    }
  });
});

describe('the open server and the Host it is asked for', () => {
  let open: TestServer;
  let withPublicUrl: TestServer;
  beforeAll(async () => {
    [open, withPublicUrl] = await Promise.all([
      startTestServer({ loops: false }),
      startTestServer({ loops: false, config: { publicUrl: 'https://rotscope.example.org/' } }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await open?.close();
    await withPublicUrl?.close();
  });

  it('answers loopback names and addresses, and refuses others with the setting to change', async () => {
    const port = new URL(open.url).port;
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `[::1]:${port}`,
      'app.localhost',
      '127.1.2.3',
    ]) {
      expect({
        host,
        status: (await send(open.url, 'GET', '/api/conversations', { host })).status,
      }).toEqual({ host, status: 200 });
    }
    for (const host of [
      'attacker.example',
      `attacker.example:${port}`,
      '192.168.1.10',
      'localhost.attacker.example',
      '127.0.0.1.nip.io',
    ]) {
      const answer = await send(open.url, 'GET', '/api/conversations', { host });
      expect({ host, status: answer.status }).toEqual({ host, status: 403 });
      expect(JSON.parse(answer.body).message).toContain('ROTSCOPE_PUBLIC_URL');
    }
    // The public URL's host is ours too.
    expect(
      (await send(withPublicUrl.url, 'GET', '/api/conversations', { host: 'rotscope.example.org' }))
        .status,
    ).toBe(200);
    expect(
      (await send(withPublicUrl.url, 'GET', '/api/conversations', { host: 'attacker.example' }))
        .status,
    ).toBe(403);
  });

  it('refuses a Host with junk after a loopback name, and two Host headers (issue 33)', async () => {
    const port = new URL(open.url).port;
    const status = (...hosts: string[]) => rawStatus(open.url, '/api/conversations', hosts);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`])
      expect({ host, status: await status(host) }).toEqual({ host, status: 200 });
    for (const host of [
      `127.0.0.1:${port}@attacker.example`,
      `attacker.example@127.0.0.1:${port}`,
      `127.0.0.1:${port}/attacker.example`,
      `127.0.0.1:${port}#attacker.example`,
      `127.0.0.1 attacker.example`,
      `localhost:${port}x`,
      `[::1]x:${port}`,
    ])
      expect({ host, status: await status(host) }).toEqual({ host, status: 403 });
    for (const hosts of [
      [`127.0.0.1:${port}`, 'attacker.example'],
      [`127.0.0.1:${port}`, `127.0.0.1:${port}`],
    ])
      expect({ hosts, status: await status(...hosts) }).toEqual({ hosts, status: 403 });
  });

  it('takes a change only from its own origin', async () => {
    const port = new URL(open.url).port;
    const host = `127.0.0.1:${port}`;
    const body = { 'content-type': 'application/json' };
    const token = (origin: string) =>
      send(open.url, 'POST', '/api/tokens', { ...body, host, origin });
    for (const origin of [
      'http://attacker.example',
      `http://localhost:${port}`,
      'http://127.0.0.1:9',
      'null',
      `http://attacker.example@127.0.0.1:${port}`,
      `http://127.0.0.1:${port}/`,
    ]) {
      const answer = await token(origin);
      expect({ origin, status: answer.status }).toEqual({ origin, status: 403 });
    }
    // An OTLP post from a page elsewhere is refused in OTLP's own form (JSON Status).
    const otlp = await send(open.url, 'POST', '/v1/traces', {
      ...body,
      host,
      origin: 'http://attacker.example',
    });
    expect(otlp.status).toBe(403);
    expect(JSON.parse(otlp.body)).toMatchObject({ code: 7 });
    // No Origin (curl, exporters) passes the guard; the CSRF check still wants a browser's token.
    expect((await send(open.url, 'POST', '/v1/traces', { ...body, host })).status).toBe(200);
  });

  it('steps aside once a token exists (the token is then what guards)', async () => {
    const admin = await createToken(open.store.db, 'default', 'admin');
    await new Promise((resolve) => setTimeout(resolve, 600));
    const host = 'rotscope.internal:4318';
    expect((await send(open.url, 'GET', '/api/conversations', { host })).status).toBe(401);
    const authorization = `Bearer ${admin.token}`;
    expect(
      (await send(open.url, 'GET', '/api/conversations', { host, authorization })).status,
    ).toBe(200);
  });
});

describe('host names', () => {
  it('reads the name out of a Host header or authority', () => {
    expect(hostName('LocalHost:4318')).toBe('localhost');
    expect(hostName('[::1]:4318')).toBe('::1');
    expect(hostName('[::1]')).toBe('::1');
    expect(hostName('example.org.')).toBe('example.org');
    expect(hostName('127.0.0.1')).toBe('127.0.0.1');
    expect(hostName('rotscope_1.example:65535')).toBe('rotscope_1.example');
  });
  it('reads nothing out of an authority with anything more than host and port (issue 33)', () => {
    for (const authority of [
      '127.0.0.1:4318@attacker.example',
      'user@127.0.0.1:4318',
      '127.0.0.1:4318/path',
      '127.0.0.1?q',
      '127.0.0.1#f',
      '127.0.0.1 attacker.example',
      '127.0.0.1, attacker.example',
      '127.0.0.1:',
      '127.0.0.1:43x',
      '127.0.0.1:123456',
      '127.0.0.1:4318:1',
      'local%68ost',
      'a..localhost',
      '[::1',
      '[::1]x',
      '[v1.x]',
      '[localhost]',
      '::1',
      '',
    ])
      expect({ authority, name: hostName(authority) }).toEqual({ authority, name: undefined });
  });
  it('counts Host headers as sent', () => {
    expect(hostHeaderCount(['Host', 'a', 'Accept', '*/*'])).toBe(1);
    expect(hostHeaderCount(['host', 'a', 'HOST', 'b', 'x-host', 'c'])).toBe(2);
    expect(hostHeaderCount(['Accept', 'host'])).toBe(0);
  });
  it('refuses junk around a loopback Host, two Hosts, and an Origin that is not exactly one', () => {
    const get = (host: string, hostHeaders = 1) =>
      hostRefusal({}, { method: 'GET', host, origin: undefined, hostHeaders });
    expect(get('127.0.0.1:1')).toBeUndefined();
    expect(get('127.0.0.1:1@attacker.example')).toMatch(/^Host "127\.0\.0\.1:1@attacker/);
    expect(get('127.0.0.1:1', 2)).toMatch(/^2 Host headers refused/);
    const post = (origin: string) =>
      hostRefusal({}, { method: 'POST', host: 'LocalHost:1', origin });
    expect(post('http://localhost:1')).toBeUndefined();
    expect(post('HTTPS://LOCALHOST:1')).toBeUndefined();
    for (const origin of [
      'http://user@localhost:1',
      'http://localhost:1/',
      'http://localhost:1?',
      'ftp://localhost:1',
      'http://localhost:2',
      'null',
    ])
      expect({ origin, refused: post(origin) !== undefined }).toEqual({ origin, refused: true });
    // the public URL's host, as app.ts reads it
    const rule = { publicHost: hostName(new URL('https://Rotscope.Example.org/x').host) };
    expect(
      hostRefusal(rule, { method: 'GET', host: 'rotscope.example.org', origin: undefined }),
    ).toBeUndefined();
  });
  it('knows which names are loopback by themselves', () => {
    for (const name of ['localhost', 'a.b.localhost', '127.0.0.1', '127.255.0.9', '::1'])
      expect(isLoopbackName(name)).toBe(true);
    for (const name of ['localhost.example', '128.0.0.1', '10.0.0.1', '::2', 'example.org', ''])
      expect(isLoopbackName(name)).toBe(false);
  });
  it('passes requests with no Host or no Origin (no web page sends those)', () => {
    expect(hostRefusal({}, { method: 'POST', host: undefined, origin: undefined })).toBeUndefined();
    expect(
      hostRefusal({}, { method: 'POST', host: '127.0.0.1:1', origin: undefined }),
    ).toBeUndefined();
    expect(
      hostRefusal({}, { method: 'POST', host: '127.0.0.1:1', origin: 'http://127.0.0.1:1' }),
    ).toBeUndefined();
    expect(
      hostRefusal({}, { method: 'GET', host: '127.0.0.1:1', origin: 'http://elsewhere' }),
    ).toBeUndefined();
  });
});
