/**
 * Retention under load (issue 10 §3): a `rotscope serve` child on PostgreSQL takes 512-span
 * batches from 2 senders while retention drops a day holding BENCH_PRUNE_ROWS (default
 * 1,000,000) old spans. Reports ingest latency outside and during the prune, same run, and
 * the same prune done the old way (batched DELETE of the same number of rows) for comparison.
 * PostgreSQL only (DATABASE_URL): PGlite's single connection cannot be shared with a server.
 */
import pg from 'pg';
import { openStore } from '../src/store/db.ts';
import { pruneOlderThan } from '../src/store/retention.ts';
import { createTestDatabase } from '../test/helpers/store.ts';
import { ingestBodies, percentile } from './ingest.ts';
import { startServerProcess } from './server-process.ts';

const DAY_MS = 86_400_000;

export async function benchPrune() {
  if (!process.env.DATABASE_URL) return { skipped: 'needs DATABASE_URL' };
  const rows = Number(process.env.BENCH_PRUNE_ROWS ?? 1_000_000);
  const url = (await createTestDatabase())!;
  const server = await startServerProcess({ DATABASE_URL: url, ROTSCOPE_RETENTION_DAYS: '0' });
  const store = await openStore({ databaseUrl: url, dataDir: 'memory://' });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const fill = async (day: number) => {
      const start =
        BigInt(Date.parse(`${new Date(day).toISOString().slice(0, 10)}T00:00:00Z`)) * 1_000_000n;
      await client.query(`SELECT rotscope_ensure_partition('spans', $1::date)`, [
        new Date(day).toISOString().slice(0, 10),
      ]);
      await client.query(
        `INSERT INTO spans (workspace_id, trace_id, span_id, name, start_ns, end_ns, role)
         SELECT 'default', md5(g::text), lpad(to_hex(g), 16, '0'), 'chat old', $1::bigint + g, $1::bigint + g, 'llm_call'
           FROM generate_series(1, $2::int) AS g`,
        [start.toString(), rows],
      );
      await client.query('CHECKPOINT');
    };
    const bodies = ingestBodies(400 * 512, false);
    let next = 0;
    const requests: Array<{ start: number; end: number }> = [];
    const phases: Record<string, [number, number]> = {};
    let stop = false;
    const senders = Array.from({ length: 2 }, async () => {
      while (!stop && next < bodies.length) {
        const body = bodies[next++]!;
        const start = performance.now();
        const response = await fetch(`${server.url}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-protobuf' },
          body,
        });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`ingest answered ${response.status}`);
        requests.push({ start, end: performance.now() });
      }
    });
    const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    // 1. partitions: the day 40 days ago is dropped whole
    await fill(Date.now() - 40 * DAY_MS);
    await wait(3_000);
    let started = performance.now();
    const dropped = await pruneOlderThan(store.db, 30);
    phases.drop = [started, performance.now()];
    await wait(3_000);

    // 2. the old way, for comparison: the same rows deleted in batches of 5,000
    const oldDay = Date.now() - 50 * DAY_MS;
    await fill(oldDay);
    const part = `spans_p${new Date(oldDay).toISOString().slice(0, 10).replaceAll('-', '')}`;
    await wait(3_000);
    started = performance.now();
    for (;;) {
      const result = await client.query(
        `DELETE FROM ${part} WHERE ctid IN (SELECT ctid FROM ${part} LIMIT 5000)`,
      );
      if ((result.rowCount ?? 0) < 5000) break;
    }
    phases.delete = [started, performance.now()];
    await wait(3_000);
    stop = true;
    await Promise.all(senders);
    const overlaps = (r: { start: number; end: number }, [from, to]: [number, number]) =>
      r.start <= to && r.end >= from;
    const of = (p: string) =>
      requests
        .filter((r) =>
          p === 'outside'
            ? !Object.values(phases).some((interval) => overlaps(r, interval))
            : overlaps(r, phases[p]!),
        )
        .map((r) => r.end - r.start);
    const stats = (p: string) => ({
      requests: of(p).length,
      p50Ms: percentile(of(p), 0.5),
      p99Ms: percentile(of(p), 0.99),
      maxMs: percentile(of(p), 1),
    });
    return {
      rows,
      droppedRows: dropped.spans,
      dropPruneMs: Math.round(phases.drop![1] - phases.drop![0]),
      deletePruneMs: Math.round(phases.delete![1] - phases.delete![0]),
      outside: stats('outside'),
      duringDrop: stats('drop'),
      duringDelete: stats('delete'),
    };
  } finally {
    await client.end();
    await store.close();
    await server.stop();
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
    await admin.end();
  }
}
