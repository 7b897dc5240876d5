/**
 * One workspace cannot block another's ingest (issue 21 §3), with real slow clients on
 * loopback (node:net, one byte a second) and two workspaces with their own ingest tokens:
 *
 * - the case: 40 connections of workspace A dribbling their bodies, reopened as soon as
 *   they are cut, while workspace B sends batches: every one of B's batches gets 200;
 * - a workspace holds at most its share of the slots (`maxWorkspaceInflightIngest`), however
 *   many connections it opens and however long it holds them: past it, 429 with Retry-After,
 *   counted as `workspace_overloaded`;
 * - a body slower than the floor rate is cut off with 408 after the grace, well before the
 *   request timeout, its slot freed and the cut counted as `too_slow`; a body at a slow but
 *   honest rate still passes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../../src/config.ts';
import { createToken } from '../../../src/store/workspaces.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { jsonRequest, jsonSpan, post } from '../../helpers/otlp-bodies.ts';
import { requestHead, slowClient, slowClients } from '../../helpers/slow-client.ts';
import net from 'node:net';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const batch = () => JSON.stringify(jsonRequest([jsonSpan()]));

async function metrics(server: TestServer): Promise<string> {
  return (await fetch(`${server.url}/metrics`)).text();
}

async function inflight(server: TestServer): Promise<number> {
  return Number(/^rotscope_ingest_inflight_requests (\d+)/m.exec(await metrics(server))?.[1]);
}

/** Polls `condition` every 20 ms for up to `ms`; whether it came true. */
async function within(ms: number, condition: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await sleep(20);
  }
  return condition();
}

/** A server with two workspaces, each with an ingest token. */
async function twoWorkspaces(config: Partial<Config>) {
  const server = await startTestServer({
    loops: false,
    config: { publicMetrics: true, ...config },
  });
  const tokenA = (await createToken(server.store.db, 'team-a', 'ingest')).token;
  const tokenB = (await createToken(server.store.db, 'team-b', 'ingest')).token;
  const send = (token: string) =>
    post(`${server.url}/v1/traces`, batch(), {
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
    });
  return { server, tokenA, tokenB, send };
}

describe("a workspace's slow connections", () => {
  let setup: Awaited<ReturnType<typeof twoWorkspaces>>;
  beforeAll(async () => {
    // The default slots (32, 16 a workspace) and floor rate; a short grace keeps the test fast.
    setup = await twoWorkspaces({ ingestBodyGraceMs: 500 });
  });
  afterAll(async () => setup?.server.close());

  it("do not block another workspace's batches, even reopened as soon as they are cut", async () => {
    const { server, tokenA, send, tokenB } = setup;
    const attacker = slowClients(server.url, 40, { token: tokenA });
    try {
      // A holds everything it can get.
      expect(await within(5_000, async () => (await inflight(server)) >= 16)).toBe(true);
      const opened = attacker.opened();
      const statuses: number[] = [];
      for (let i = 0; i < 15; i++) {
        statuses.push((await send(tokenB)).status);
        await sleep(100);
      }
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
      // Meanwhile A's connections were cut and reopened.
      expect(attacker.opened()).toBeGreaterThan(opened);
    } finally {
      attacker.stop();
    }
  });
});

describe('the per-workspace share of the ingest slots', () => {
  let setup: Awaited<ReturnType<typeof twoWorkspaces>>;
  beforeAll(async () => {
    setup = await twoWorkspaces({
      maxInflightIngest: 8,
      maxWorkspaceInflightIngest: 4,
      minIngestBytesPerSecond: 0, // no floor: A's slow bodies stay for the whole request
      retryAfterSeconds: 3,
    });
  });
  afterAll(async () => setup?.server.close());

  it('holds a workspace to its share while the others still get slots', async () => {
    const { server, tokenA, tokenB, send } = setup;
    const held = await Promise.all(
      Array.from({ length: 10 }, () => slowClient(server.url, { token: tokenA })),
    );
    try {
      // every one of A's ten requests answered 429 or holding a slot (were a fifth admitted, the
      // count would pass ten with a slot too many, and fail below)
      const refusedNow = () => held.filter((c) => /^HTTP\/1\.1 429/.test(c.received())).length;
      expect(await within(5_000, async () => refusedNow() + (await inflight(server)) >= 10)).toBe(
        true,
      );
      // Four of A's requests are held; the six others were refused at once, with Retry-After.
      expect(await inflight(server)).toBe(4);
      const refused = held.filter((client) => /^HTTP\/1\.1 429/.test(client.received()));
      expect(refused).toHaveLength(6);
      expect(refused[0]!.received()).toMatch(/\r\nretry-after: 3\r\n/i);
      expect(refused[0]!.received()).toContain('too many requests in flight for this workspace');
      // B is not blocked: its batches are answered 200 while A holds its share.
      for (let i = 0; i < 3; i++) expect((await send(tokenB)).status).toBe(200);
      // A's own fast batch is refused too: A holds its share.
      expect((await send(tokenA)).status).toBe(429);
      expect(await metrics(server)).toMatch(
        /rotscope_ingest_rejected_total\{signal="spans",reason="workspace_overloaded"\} 7/,
      );
    } finally {
      for (const client of held) client.socket.destroy();
    }
    expect(await within(3_000, async () => (await inflight(server)) === 0)).toBe(true);
    expect((await send(tokenA)).status).toBe(200);
  });
});

describe('the minimum body rate', () => {
  const GRACE_MS = 500;
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      loops: false,
      config: {
        publicMetrics: true,
        maxInflightIngest: 2,
        minIngestBytesPerSecond: 1024,
        ingestBodyGraceMs: GRACE_MS,
        requestTimeoutMs: 30_000,
      },
    });
  });
  afterAll(async () => server?.close());

  it('cuts a body arriving at a byte a second off with 408 after the grace, and frees its slot', async () => {
    const slow = await Promise.all([slowClient(server.url), slowClient(server.url)]);
    const elapsed = await Promise.race([
      Promise.all(slow.map((client) => client.closed)),
      sleep(5_000).then(() => 'still open after 5 s' as const),
    ]);
    for (const client of slow) client.socket.destroy();
    expect(elapsed).not.toBe('still open after 5 s');
    for (const [i, ms] of (elapsed as number[]).entries()) {
      expect(ms).toBeGreaterThanOrEqual(GRACE_MS);
      expect(ms).toBeLessThan(GRACE_MS + 2_000); // well before the 30 s request timeout
      expect(slow[i]!.received()).toMatch(/^HTTP\/1\.1 408/);
      expect(slow[i]!.received()).toContain('request body slower than 1024 bytes/s');
    }
    expect(await within(2_000, async () => (await inflight(server)) === 0)).toBe(true);
    const accepted = await post(`${server.url}/v1/traces`, batch(), {
      'content-type': 'application/json',
    });
    expect(accepted.status).toBe(200);
    expect(await metrics(server)).toMatch(
      /rotscope_ingest_rejected_total\{signal="spans",reason="too_slow"\} 2/,
    );
  });

  it('lets a body through that arrives slowly but above the floor', async () => {
    // ~12 KiB over ~1.5 s (8 KiB/s), in 512-byte pieces: past the grace, above the floor.
    const span = jsonSpan();
    span.attributes.push({ key: 'test.pad', value: { stringValue: 'x'.repeat(12_000) } });
    const body = Buffer.from(JSON.stringify(jsonRequest([span])));
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('error', () => {});
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(requestHead(body.length));
    for (let at = 0; at < body.length; at += 512) {
      socket.write(body.subarray(at, at + 512));
      await sleep(62);
    }
    expect(await within(5_000, async () => received.includes('\r\n\r\n'))).toBe(true);
    socket.destroy();
    expect(received).toMatch(/^HTTP\/1\.1 200/);
  });
});
