/**
 * Two `rotscope serve` processes (real child processes) share one PostgreSQL and ingest one
 * stream split between them: every expected finding exists exactly once, and each is
 * delivered once. Postgres only (PGlite is one process).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../helpers/child-server.ts';
import { startHttpReceiver, type HttpReceiver } from '../helpers/http-receiver.ts';
import { hex, jsonRequest, jsonSpan } from '../helpers/otlp-bodies.ts';
import { createTestDatabase, usingPostgres } from '../helpers/store.ts';

const CONVERSATIONS = 12;
const CALLS = 6;

describe.skipIf(!usingPostgres)('two serve processes on one database', () => {
  let url: string;
  let servers: ChildServer[] = [];
  let receiver: HttpReceiver;

  beforeAll(async () => {
    url = (await createTestDatabase())!;
    receiver = await startHttpReceiver();
    const env = {
      DATABASE_URL: url,
      ROTSCOPE_EVALUATOR_QUIET_MS: '200',
      ROTSCOPE_EVALUATOR_POLL_MS: '100',
      ROTSCOPE_ALLOW_PRIVATE_ADDRESSES: 'true',
    };
    // The first one migrates; the second starts at the same time and must wait for it safely.
    servers = await Promise.all([startChildServer(env), startChildServer(env)]);
  }, 300_000);
  afterAll(async () => {
    for (const server of servers) server.process.kill('SIGTERM');
    await Promise.all(servers.map((server) => server.exited));
    await receiver?.close();
  });

  it('finds every expected finding exactly once and delivers each once', async () => {
    const [a, b] = servers as [ChildServer, ChildServer];
    const channel = (await (
      await fetch(`${a.url}/api/channels`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          type: 'webhook',
          name: 'hook',
          config: { url: `${receiver.url}/hook` },
        }),
      })
    ).json()) as { id: string };
    const put = await fetch(`${b.url}/api/alerts/context-rot`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ channels: [{ id: channel.id, minSeverity: 'info' }] }),
    });
    expect(put.status).toBe(200);

    // Each conversation: calls growing by 15% of gpt-4o's 128k window up to 90%, every third one cut off.
    // Calls of one conversation alternate between the two servers.
    const base = BigInt(Date.now()) * 1_000_000n;
    const sends: Array<() => Promise<Response>> = [];
    let expectedCutOffs = 0;
    for (let call = 0; call < CALLS; call++) {
      for (let c = 0; c < CONVERSATIONS; c++) {
        const cutOff = call % 3 === 2;
        if (cutOff) expectedCutOffs++;
        const span = jsonSpan({
          traceId: hex(16),
          startNs: base + BigInt(call) * 1_000_000_000n,
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': 'gpt-4o',
            'gen_ai.conversation.id': `split-${c}`,
            'gen_ai.usage.input_tokens': Math.round(128_000 * (0.15 * (call + 1))),
            'gen_ai.usage.output_tokens': 100,
            'gen_ai.response.finish_reasons': cutOff ? 'length' : 'stop',
          },
        });
        const target = (call + c) % 2 === 0 ? a : b;
        sends.push(() =>
          fetch(`${target.url}/v1/traces`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(jsonRequest([span])),
          }),
        );
      }
    }
    // Eight exporters at a time (more would meet the in-flight limit's 429s, which is right, but not this test).
    const statuses: number[] = [];
    for (let i = 0; i < sends.length; i += 8) {
      const responses = await Promise.all(sends.slice(i, i + 8).map((send) => send()));
      statuses.push(...responses.map((response) => response.status));
    }
    expect(new Set(statuses)).toEqual(new Set([200]));

    // Each call is its own trace (run), so context_too_full fires once per call at ≥ 70%:
    // calls 5 and 6 (75% and 90%) of each conversation.
    const expected = { output_cut_off: expectedCutOffs, context_too_full: CONVERSATIONS * 2 };
    const total = expected.output_cut_off + expected.context_too_full;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      let rows: Array<{ detector: string; n: number }> = [];
      for (let i = 0; i < 200; i++) {
        rows = (
          await client.query('SELECT detector, count(*)::int AS n FROM findings GROUP BY detector')
        ).rows;
        if (rows.reduce((sum, row) => sum + row.n, 0) >= total) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(Object.fromEntries(rows.map((row) => [row.detector, row.n]))).toEqual(expected);
      const duplicates = await client.query(
        'SELECT detector, anchor FROM findings GROUP BY detector, anchor HAVING count(*) > 1',
      );
      expect(duplicates.rows).toEqual([]);

      const delivered = await receiver.waitFor(total, 60_000);
      await new Promise((resolve) => setTimeout(resolve, 1_000)); // any duplicate send would arrive now
      const ids = receiver.requests.map((request) => String(request.headers['webhook-id']));
      expect(new Set(ids).size).toBe(total);
      expect(ids).toHaveLength(total);
      expect(delivered.length).toBeGreaterThanOrEqual(total);
    } finally {
      await client.end();
    }
  }, 300_000);
});
