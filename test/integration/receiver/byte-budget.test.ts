/**
 * The byte budget (real HTTP): bodies in flight, as sent and inflated, are bounded overall and
 * per workspace; past a bound the receiver answers 429 with Retry-After before reading (or
 * inflating) more, and one workspace over its share or its rate does not stop another.
 */
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../../src/store/workspaces.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { jsonRequest, jsonSpan, post } from '../../helpers/otlp-bodies.ts';

const KiB = 1024;

/** A valid OTLP/JSON body of about `bytes` bytes (one span with a padding attribute). */
function bodyOf(bytes: number): Buffer {
  const span = jsonSpan();
  span.attributes.push({ key: 'test.pad', value: { stringValue: 'x'.repeat(bytes) } });
  return Buffer.from(JSON.stringify(jsonRequest([span])));
}

interface Held {
  /** The response status, once the server answers. */
  status: Promise<number>;
  /** Sends the rest of the body. */
  finish(): void;
}

/**
 * Sends the headers and the first `sentBytes` of `body`, and holds the rest until `finish()`.
 * The status resolves as soon as the server answers, whether or not the body was sent.
 */
function hold(url: string, body: Buffer, headers: Record<string, string>, sentBytes: number): Held {
  const target = new URL(`${url}/v1/traces`);
  let request!: http.ClientRequest;
  const status = new Promise<number>((resolve, reject) => {
    request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent: false,
        headers: { ...headers, 'content-length': String(body.length) },
      },
      (response) => {
        resolve(response.statusCode ?? 0);
        response.resume();
      },
    );
    request.on('error', (error) => (request.writableEnded ? undefined : reject(error)));
    request.flushHeaders();
    if (sentBytes > 0) request.write(body.subarray(0, sentBytes));
  });
  status.catch(() => {});
  return {
    status,
    finish: () => request.end(body.subarray(sentBytes)),
  };
}

async function inflightBytes(server: TestServer, token?: string): Promise<number> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const text = await (await fetch(`${server.url}/metrics`, { headers })).text();
  return Number(/^rotscope_ingest_inflight_bytes (\d+)/m.exec(text)?.[1] ?? 0);
}

async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 20));
}

const json = { 'content-type': 'application/json' };

describe('a byte budget over all workspaces', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      loops: false,
      config: {
        maxInflightBytes: 1024 * KiB,
        maxWorkspaceInflightBytes: 1024 * KiB,
        retryAfterSeconds: 3,
      },
    });
  });
  afterAll(async () => server?.close());

  it('answers 429 with Retry-After from the Content-Length, before the body is sent', async () => {
    const first = hold(server.url, bodyOf(700 * KiB), json, 100);
    await until(async () => (await inflightBytes(server)) >= 700 * KiB);
    // Nothing of the second body is ever sent: the answer comes from its headers.
    const second = hold(server.url, bodyOf(500 * KiB), json, 0);
    expect(await second.status).toBe(429);
    first.finish();
    expect(await first.status).toBe(200);
    await until(async () => (await inflightBytes(server)) === 0);
    const again = await post(`${server.url}/v1/traces`, bodyOf(500 * KiB), json);
    expect(again.status).toBe(200);
  });

  it('counts inflated bytes: a gzip body that inflates past what is left is refused', async () => {
    const first = hold(server.url, bodyOf(600 * KiB), json, 100);
    await until(async () => (await inflightBytes(server)) >= 600 * KiB);
    const zipped = gzipSync(bodyOf(800 * KiB));
    expect(zipped.length).toBeLessThan(100 * KiB);
    const refused = await post(`${server.url}/v1/traces`, zipped, {
      ...json,
      'content-encoding': 'gzip',
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('3');
    expect(JSON.parse(refused.body.toString()).message).toMatch(/over the budget/);
    first.finish();
    expect(await first.status).toBe(200);
    await until(async () => (await inflightBytes(server)) === 0);
    // Alone in flight, a body larger than the whole budget still passes (it is bounded by
    // the body limits).
    const alone = await post(`${server.url}/v1/traces`, gzipSync(bodyOf(1500 * KiB)), {
      ...json,
      'content-encoding': 'gzip',
    });
    expect(alone.status).toBe(200);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(
      /rotscope_ingest_rejected_total\{signal="spans",reason="overloaded"\} 2/,
    );
  });
});

describe('per workspace', () => {
  let server: TestServer;
  let tokenA: string;
  let tokenB: string;
  let reader: string;
  beforeAll(async () => {
    server = await startTestServer({
      loops: false,
      config: {
        maxInflightBytes: 4096 * KiB,
        maxWorkspaceInflightBytes: 1024 * KiB,
        workspaceIngestBytesPerSecond: 0,
      },
    });
    tokenA = (await createToken(server.store.db, 'team-a', 'ingest')).token;
    tokenB = (await createToken(server.store.db, 'team-b', 'ingest')).token;
    reader = (await createToken(server.store.db, 'team-a', 'read')).token;
  });
  afterAll(async () => server?.close());

  it("one workspace over its share gets 429 while another's requests pass", async () => {
    const a = { ...json, authorization: `Bearer ${tokenA}` };
    const b = { ...json, authorization: `Bearer ${tokenB}` };
    const held = hold(server.url, bodyOf(900 * KiB), a, 100);
    await until(async () => (await inflightBytes(server, reader)) >= 900 * KiB);
    const refusedA = hold(server.url, bodyOf(300 * KiB), a, 0);
    expect(await refusedA.status).toBe(429);
    const passedB = await post(`${server.url}/v1/traces`, bodyOf(900 * KiB), b);
    expect(passedB.status).toBe(200);
    held.finish();
    expect(await held.status).toBe(200);
  });
});

describe('a rate limit per workspace', () => {
  let server: TestServer;
  let tokenA: string;
  let tokenB: string;
  let reader: string;
  beforeAll(async () => {
    server = await startTestServer({
      loops: false,
      config: { workspaceIngestBytesPerSecond: 20 * KiB },
    });
    tokenA = (await createToken(server.store.db, 'team-a', 'ingest')).token;
    tokenB = (await createToken(server.store.db, 'team-b', 'ingest')).token;
    reader = (await createToken(server.store.db, 'team-a', 'read')).token;
  });
  afterAll(async () => server?.close());

  it('refuses a workspace that sent more than its rate until it has paid off, and not another', async () => {
    const a = { ...json, authorization: `Bearer ${tokenA}` };
    const b = { ...json, authorization: `Bearer ${tokenB}` };
    // 100 KiB at 20 KiB/s: a debt of about 80 KiB, 4 s to pay off.
    expect((await post(`${server.url}/v1/traces`, bodyOf(100 * KiB), a)).status).toBe(200);
    const refused = await post(`${server.url}/v1/traces`, bodyOf(KiB), a);
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(5);
    expect(JSON.parse(refused.body.toString()).message).toMatch(/ingest rate/);
    expect((await post(`${server.url}/v1/traces`, bodyOf(KiB), b)).status).toBe(200);
    const metrics = await (
      await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${reader}` } })
    ).text();
    expect(metrics).toMatch(/reason="rate_limited"\} 1/);
  });
});
