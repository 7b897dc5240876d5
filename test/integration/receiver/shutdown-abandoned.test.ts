/**
 * A shutdown does not wait for uploads whose clients are gone (issue 21, "Also"): 16 complete
 * batches wait for their commit on a store that writes one batch per 250 ms, then their
 * clients disconnect. The shutdown that follows drops what has not started to commit (nothing
 * of it stored: the clients saw no 200 and send it again) and ends once the batches already
 * being written are done, instead of writing every abandoned batch first (4 s here; 27 large
 * uploads held a SIGTERM for over 150 s in the issue). Real sockets on loopback (node:net).
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inflightRequests, startTestServer, type TestServer } from '../../helpers/server.ts';
import { createTestStore, type TestStore } from '../../helpers/store.ts';
import { slowIngestStore } from '../../helpers/slow-store.ts';
import { hex, jsonRequest, jsonSpan } from '../../helpers/otlp-bodies.ts';
import { requestHead } from '../../helpers/slow-client.ts';

const MS_PER_BATCH = 250;
const UPLOADS = 16;

let store: TestStore;
let server: TestServer;
beforeAll(async () => {
  store = await createTestStore();
  server = await startTestServer({
    loops: false,
    store: slowIngestStore(store, MS_PER_BATCH),
    // Every upload admitted whatever the commit rate: the queue is what is under test.
    config: { maxIngestCommitWaitMs: 0 },
  });
});
afterAll(async () => {
  await server?.close();
  await store?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The in-flight gauge, read in-process: on PGlite a request to /metrics would wait for the
 * commit holding the one connection (the auth hook's lookup). */
const inflight = () => inflightRequests(server);

/** Sends one whole batch of spans of `traceId` on a socket of its own, and leaves it open. */
async function upload(traceId: string): Promise<net.Socket> {
  const body = JSON.stringify(jsonRequest([jsonSpan({ traceId }), jsonSpan({ traceId })]));
  const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(requestHead(Buffer.byteLength(body)) + body);
  return socket;
}

describe('a shutdown with abandoned uploads', () => {
  it('drops the batches whose clients are gone instead of committing them first', async () => {
    const traceIds = Array.from({ length: UPLOADS }, () => hex(16));
    const sockets = await Promise.all(traceIds.map(upload));
    // All read and waiting for (or in) their commit; the first may have been answered already.
    for (let i = 0; i < 100 && (await inflight()) < UPLOADS - 1; i++) await sleep(10);
    expect(await inflight()).toBeGreaterThanOrEqual(UPLOADS - 1);
    for (const socket of sockets) socket.destroy();
    // the server has seen every client go (a slot is freed when its response closes)
    for (let i = 0; i < 500 && (await inflight()) > 0; i++) await sleep(10);
    expect(await inflight()).toBe(0);

    const started = performance.now();
    await server.app.shutdown();
    const elapsed = performance.now() - started;
    // The batches already being written finish (one per transaction); the rest are dropped.
    // Before: every abandoned batch was written first (≥ 14 × 250 ms).
    expect(elapsed).toBeLessThan(MS_PER_BATCH * 4);
    const stored = await store.db
      .selectFrom('llm_calls')
      .select('trace_id')
      .distinct()
      .where('trace_id', 'in', traceIds)
      .execute();
    expect(stored.length).toBeLessThanOrEqual(4);
  });
});
