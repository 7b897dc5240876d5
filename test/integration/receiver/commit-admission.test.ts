/**
 * Admission by what the store can commit (issue 21 §3), real HTTP on loopback over a store
 * whose every batch takes 300 ms to write (a busy database): offered four times what it can
 * commit, the receiver answers the batches it accepts within a few seconds and refuses the
 * rest with 429 and Retry-After at once, instead of accepting every slot's worth to wait for
 * its turn (9 s on one PGlite connection, 4.5 s on PostgreSQL's two, before).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { createTestStore } from '../../helpers/store.ts';
import { slowIngestStore } from '../../helpers/slow-store.ts';
import { jsonRequest, jsonSpan, post } from '../../helpers/otlp-bodies.ts';

const MS_PER_BATCH = 300;
const MAX_WAIT_MS = 1_000;

let server: TestServer;
beforeAll(async () => {
  const store = slowIngestStore(await createTestStore(), MS_PER_BATCH);
  server = await startTestServer({
    loops: false,
    store,
    config: { maxIngestCommitWaitMs: MAX_WAIT_MS, retryAfterSeconds: 2 },
  });
  server.close = ((close) => async () => {
    await close();
    await store.close();
  })(server.close);
});
afterAll(async () => server?.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function send(): Promise<{ status: number; ms: number; retryAfter: string | null }> {
  const started = performance.now();
  const response = await post(
    `${server.url}/v1/traces`,
    JSON.stringify(jsonRequest([jsonSpan()])),
    {
      'content-type': 'application/json',
    },
  );
  return {
    status: response.status,
    ms: performance.now() - started,
    retryAfter: response.headers.get('retry-after'),
  };
}

describe('admission by what the store can commit', () => {
  it('answers what it accepts within a few seconds and refuses the rest at once', async () => {
    // The commit rate is measured from batches answered: a few, one at a time.
    for (let i = 0; i < 3; i++) expect((await send()).status).toBe(200);

    // 40 batches in a second, an open loop (one every 25 ms): over four times the rate.
    const answers: Array<Promise<Awaited<ReturnType<typeof send>>>> = [];
    for (let i = 0; i < 40; i++) {
      answers.push(send());
      await sleep(25);
    }
    const results = await Promise.all(answers);
    const accepted = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 429);
    expect(accepted.length + refused.length).toBe(40);
    expect(accepted.length).toBeGreaterThanOrEqual(3);
    expect(refused.length).toBeGreaterThan(10);
    // Accepted: answered within about twice the target (a group can wait behind one group).
    expect(Math.max(...accepted.map((r) => r.ms))).toBeLessThan(MAX_WAIT_MS * 2 + 500);
    // Refused: at once, before the body is read, with Retry-After.
    expect(Math.max(...refused.map((r) => r.ms))).toBeLessThan(500);
    expect(new Set(refused.map((r) => r.retryAfter))).toEqual(new Set(['2']));

    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain(
      `rotscope_ingest_rejected_total{signal="spans",reason="store_behind"} ${refused.length}`,
    );
    // Once the queue has drained, a batch is accepted again.
    await sleep(MAX_WAIT_MS);
    expect((await send()).status).toBe(200);
  });
});
