/**
 * Time limits on connections, with real slow sockets on loopback: a body sent a byte at a time
 * (slow-loris) is cut off at the request timeout and frees its ingest slot; headers never
 * finished are cut off at the headers timeout; connections that send nothing and idle
 * keep-alive connections are closed.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, untilInflight, type TestServer } from '../../helpers/server.ts';
import { jsonRequest, jsonSpan, post } from '../../helpers/otlp-bodies.ts';

const HEADERS_MS = 1_000;
const REQUEST_MS = 2_000;
const KEEP_ALIVE_MS = 500;
/** Room for Node's check interval (≤ 250 ms here) and a loaded machine. */
const SLACK_MS = 2_500;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    loops: false,
    config: {
      maxInflightIngest: 2,
      minIngestBytesPerSecond: 0, // the request timeout alone (the floor: noisy-neighbour.test.ts)
      headersTimeoutMs: HEADERS_MS,
      requestTimeoutMs: REQUEST_MS,
      keepAliveTimeoutMs: KEEP_ALIVE_MS,
    },
  });
});
afterAll(async () => {
  await server?.close();
});

const body = JSON.stringify(jsonRequest([jsonSpan()]));

interface OpenSocket {
  socket: net.Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Resolves with the ms from `connect` to the server closing the connection. */
  closed: Promise<number>;
}

async function connect(): Promise<OpenSocket> {
  const { port } = new URL(server.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString()));
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const started = Date.now();
  const closed = new Promise<number>((resolve) =>
    socket.once('close', () => resolve(Date.now() - started)),
  );
  return { socket, received: () => received, closed };
}

/** Writes one byte of `text` per `everyMs` until the socket closes or the text runs out. */
function dribble(socket: net.Socket, text: string, everyMs: number): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || i >= text.length) return clearInterval(timer);
    socket.write(text[i++]!);
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

const head = (length: number) =>
  `POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

describe('connection time limits', () => {
  it('cuts off a slow-loris body at the request timeout with 408 and frees its ingest slot', async () => {
    const slow = await Promise.all([connect(), connect()]);
    for (const { socket } of slow) {
      socket.write(head(Buffer.byteLength(body)));
      dribble(socket, body, 1_000); // one byte a second
    }
    await untilInflight(server, 2);
    // Both slots are held by the slow clients.
    const refused = await post(`${server.url}/v1/traces`, body, {
      'content-type': 'application/json',
    });
    expect(refused.status).toBe(429);

    const elapsed = await Promise.all(slow.map((s) => s.closed));
    for (const [i, ms] of elapsed.entries()) {
      expect(ms).toBeGreaterThanOrEqual(REQUEST_MS - 100);
      expect(ms).toBeLessThan(REQUEST_MS + SLACK_MS);
      expect(slow[i]!.received()).toMatch(/^HTTP\/1\.1 408/);
    }
    const accepted = await post(`${server.url}/v1/traces`, body, {
      'content-type': 'application/json',
    });
    expect(accepted.status).toBe(200);
  });

  it('cuts off headers that never finish at the headers timeout', async () => {
    const slow = await connect();
    slow.socket.write('POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    dribble(slow.socket, `X-Padding: ${'a'.repeat(100)}`, 200);
    const ms = await slow.closed;
    expect(ms).toBeGreaterThanOrEqual(HEADERS_MS - 100);
    expect(ms).toBeLessThan(HEADERS_MS + SLACK_MS);
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes connections that never send a byte', async () => {
    const idle = await Promise.all(Array.from({ length: 200 }, connect));
    const elapsed = await Promise.all(idle.map((s) => s.closed));
    expect(Math.max(...elapsed)).toBeLessThan(HEADERS_MS + SLACK_MS);
  });

  it('closes idle keep-alive connections after the keep-alive timeout', async () => {
    const client = await connect();
    client.socket.write(
      'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n',
    );
    const ms = await client.closed;
    expect(client.received()).toMatch(/^HTTP\/1\.1 200/);
    expect(client.received()).toMatch(/keep-alive: timeout=/i);
    expect(ms).toBeGreaterThanOrEqual(KEEP_ALIVE_MS - 100);
    expect(ms).toBeLessThan(KEEP_ALIVE_MS + SLACK_MS);
  });
});
