/**
 * Clients that abort an ingest request at any stage free its in-flight slot: after more
 * aborted uploads than there are slots, a normal request still gets 200 and the in-flight
 * gauge is back at 0. Real sockets on loopback (net.connect), so the server sees real aborts.
 */
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { jsonRequest, jsonSpan, post } from '../../helpers/otlp-bodies.ts';

const SLOTS = 2;
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ loops: false, config: { maxInflightIngest: SLOTS } });
});
afterAll(async () => {
  await server?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The request head of a POST to /v1/traces announcing `length` body bytes. */
function head(length: number, extra = ''): string {
  return (
    `POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
    `${extra}Content-Length: ${length}\r\n\r\n`
  );
}

/** Connects, lets `send` write, then destroys the socket; resolves once it is closed. */
async function abortAfter(send: (socket: net.Socket) => Promise<void>): Promise<void> {
  const { port } = new URL(server.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  await send(socket);
  const closed = new Promise((resolve) => socket.once('close', resolve));
  socket.destroy();
  await closed;
}

async function inflightGauge(): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const match = /^rotscope_ingest_inflight_requests (\d+)/m.exec(text);
  return Number(match?.[1] ?? Number.NaN);
}

async function gaugeSettlesAtZero(): Promise<number> {
  let value = await inflightGauge();
  for (let i = 0; i < 50 && value !== 0; i++) {
    await sleep(50);
    value = await inflightGauge();
  }
  return value;
}

const body = JSON.stringify(jsonRequest([jsonSpan()]));
const stages: Array<[string, (socket: net.Socket) => Promise<void>]> = [
  [
    'after the headers',
    async (socket) => {
      socket.write(head(Buffer.byteLength(body)));
      await sleep(50);
    },
  ],
  [
    'in the middle of the body',
    async (socket) => {
      socket.write(head(Buffer.byteLength(body)) + body.slice(0, 20));
      await sleep(50);
    },
  ],
  [
    'after the whole body, before the response',
    async (socket) => {
      socket.write(head(Buffer.byteLength(body)) + body);
    },
  ],
  [
    'while the server inflates a gzip body',
    async (socket) => {
      // 24 MiB of JSON whitespace inflates for a while and stays under the 32 MiB limit.
      const gzipped = gzipSync(Buffer.alloc(24 * 1024 * 1024, ' '));
      socket.write(head(gzipped.length, 'Content-Encoding: gzip\r\n'));
      socket.write(gzipped);
      await sleep(5);
    },
  ],
];

describe('aborted ingest requests', () => {
  for (const [stage, send] of stages) {
    it(`free their slot when the client aborts ${stage}`, async () => {
      for (let i = 0; i < SLOTS + 3; i++) await abortAfter(send);
      expect(await gaugeSettlesAtZero()).toBe(0);
      const accepted = await post(`${server.url}/v1/traces`, body, {
        'content-type': 'application/json',
      });
      expect(accepted.status).toBe(200);
      expect(await gaugeSettlesAtZero()).toBe(0);
    });
  }
});
