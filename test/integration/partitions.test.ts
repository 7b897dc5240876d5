/**
 * The raw tables are partitioned by day (migrations/0010): partitions exist ahead of time,
 * a row of a day without one waits in the default partition until its day's partition is
 * made, re-sent spans still dedupe, and retention drops an old day whole. Pruning an old day
 * of PRUNE_ROWS rows (default 200,000) while ingest runs: every batch sent during the prune
 * commits, and the rows go by DROP, not DELETE. How long ingest waits beside a drop of a million
 * rows is a benchmark's question, not a test's: `npm run bench -- prune` (docs/scaling.md).
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Span } from '../../src/model/telemetry.ts';
import { IngestPipeline } from '../../src/receiver/pipeline.ts';
import { ensurePartitions, listPartitions, utcDay } from '../../src/store/partitions.ts';
import { pruneOlderThan } from '../../src/store/retention.ts';
import { genAiChatAttributes } from '../helpers/otel.ts';
import { createTestStore, usingPostgres, type TestStore } from '../helpers/store.ts';
import { span } from '../unit/ingest/helpers.ts';

const DAY_MS = 86_400_000;
const PRUNE_ROWS = Number(process.env.PRUNE_ROWS ?? 200_000);

let store: TestStore;
beforeAll(async () => {
  store = await createTestStore();
});
afterAll(async () => {
  await store?.close();
});

const ns = (ms: number) => (BigInt(ms) * 1_000_000n).toString();

/** A batch of chat spans started at `ms`, each in a conversation of its own. */
function chatSpans(count: number, ms: number): Span[] {
  const traceId = randomBytes(16).toString('hex');
  return Array.from({ length: count }, (_, i) =>
    span({
      traceId,
      spanId: randomBytes(8).toString('hex'),
      name: 'chat claude-sonnet-4-5',
      kind: 3,
      startTimeUnixNano: ns(ms + i),
      endTimeUnixNano: ns(ms + i + 1_000),
      attributes: genAiChatAttributes(i, `conv-${traceId}-${i}`),
    }),
  );
}

const whereIs = async (table: string, spanId: string) =>
  (
    await sql<{ part: string }>`SELECT tableoid::regclass::text AS part FROM ${sql.table(table)}
      WHERE span_id = ${spanId}`.execute(store.db)
  ).rows.map((row) => row.part);

describe('daily partitions of the raw tables', () => {
  it('exist from yesterday to a week ahead for every raw table', async () => {
    const days = new Set((await listPartitions(store.db)).map((p) => `${p.table}:${p.day}`));
    for (const table of ['spans', 'llm_calls', 'tool_results', 'log_records'])
      for (let d = -1; d <= 7; d++)
        expect(days).toContain(`${table}:${utcDay(Date.now() + d * DAY_MS)}`);
  });

  it('re-sent spans are stored once, in the partition of their day', async () => {
    const pipeline = new IngestPipeline(store, { keepRawSpans: true });
    const spans = chatSpans(3, Date.now());
    await pipeline.ingestSpans('default', spans);
    await pipeline.ingestSpans('default', spans); // the exporter's retry
    await pipeline.ingestSpans('default', [...spans, ...chatSpans(1, Date.now())]); // and a mix
    const today = `_p${utcDay(Date.now()).replaceAll('-', '')}`;
    for (const s of spans) {
      expect(await whereIs('spans', s.spanId)).toEqual([`spans${today}`]);
      expect(await whereIs('llm_calls', s.spanId)).toEqual([`llm_calls${today}`]);
    }
    const calls = await sql<{ n: number }>`SELECT count(*)::int AS n FROM llm_calls
      WHERE trace_id = ${spans[0]!.traceId}`.execute(store.db);
    expect(calls.rows[0]!.n).toBe(3);
  });

  it('a span of a day without a partition waits in the default one and moves into its own', async () => {
    const farAhead = Date.now() + 30 * DAY_MS;
    const [late] = chatSpans(1, farAhead);
    await new IngestPipeline(store, { keepRawSpans: true }).ingestSpans('default', [late!]);
    expect(await whereIs('spans', late!.spanId)).toEqual(['spans_default']);
    // created when its day comes within the window, with its rows moved in
    const created = await ensurePartitions(store.db, farAhead - 3 * DAY_MS);
    const part = `spans_p${utcDay(farAhead).replaceAll('-', '')}`;
    expect(created).toContain(part);
    expect(await whereIs('spans', late!.spanId)).toEqual([part]);
    expect(await whereIs('llm_calls', late!.spanId)).toEqual([part.replace('spans', 'llm_calls')]);
  });

  // Two sessions at once: PostgreSQL only (PGlite has one connection).
  it.runIf(usingPostgres)(
    'a read sent while a day’s rows move into their new partition still finds them',
    async () => {
      const day = Date.now() + 40 * DAY_MS;
      const spans = chatSpans(3, day);
      await new IngestPipeline(store).ingestSpans('default', spans);
      const traceId = spans[0]!.traceId;
      const mover = new pg.Client({ connectionString: store.url });
      const reader = new pg.Client({ connectionString: store.url });
      await Promise.all([mover.connect(), reader.connect()]);
      try {
        const count = `SELECT count(*)::int AS n FROM llm_calls WHERE workspace_id = $1 AND trace_id = $2`;
        expect((await reader.query(count, ['default', traceId])).rows[0]).toEqual({ n: 3 });
        // the retention loop's move (ensurePartitions), held open while a read is sent
        await mover.query('BEGIN');
        await mover.query(`SELECT rotscope_ensure_partition('llm_calls', $1::date)`, [utcDay(day)]);
        const reading = reader.query(count, ['default', traceId]);
        // the read waits for the move to commit (before, it went on with the old partitions)
        const readerPid = (reader as unknown as { processID: number }).processID;
        for (let waited = 0; ; waited += 20) {
          const { rows } = await mover.query(
            `SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND pid = $1`,
            [readerPid],
          );
          if (rows[0].n > 0) break;
          if (waited > 10_000) throw new Error('the read never waited for the move');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await mover.query('COMMIT');
        expect((await reading).rows[0]).toEqual({ n: 3 });
      } finally {
        await Promise.all([mover.end(), reader.end()]);
      }
    },
  );
});

describe('pruning an old day of rows', () => {
  it('drops the old day whole while ingest goes on', { timeout: 600_000 }, async () => {
    const oldDay = Date.now() - 40 * DAY_MS;
    await ensurePartitions(store.db, oldDay); // the day had its partition back then
    const oldPart = `spans_p${utcDay(oldDay).replaceAll('-', '')}`;
    const dayStart = Date.parse(`${utcDay(oldDay)}T00:00:00Z`);
    await sql`INSERT INTO spans (workspace_id, trace_id, span_id, name, start_ns, end_ns, role)
      SELECT 'default', md5(g::text), lpad(to_hex(g), 16, '0'), 'chat old', ${ns(dayStart)}::bigint + g, ${ns(dayStart)}::bigint + g, 'llm_call'
        FROM generate_series(1, ${PRUNE_ROWS}) AS g`.execute(store.db);

    const pipeline = new IngestPipeline(store, { keepRawSpans: true });
    const latencies: Array<{ ms: number; during: boolean }> = [];
    let pruning = false;
    let stop = false;
    let sent = 0;
    const ingest = (async () => {
      while (!stop) {
        const started = performance.now();
        const during = pruning;
        await pipeline.ingestSpans('default', chatSpans(50, Date.now()));
        sent += 50;
        latencies.push({ ms: performance.now() - started, during: during || pruning });
        // PGlite answers without leaving the microtask queue: let timers and the prune run
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    while (latencies.length < 5) await new Promise((resolve) => setTimeout(resolve, 20));
    pruning = true;
    const deleted = await pruneOlderThan(store.db, 30);
    pruning = false;
    const after = latencies.length;
    while (latencies.length < after + 5) await new Promise((resolve) => setTimeout(resolve, 20));
    stop = true;
    await ingest;

    expect(deleted.spans).toBe(PRUNE_ROWS);
    expect((await listPartitions(store.db)).map((p) => p.name)).not.toContain(oldPart);
    const left = await sql<{ n: number }>`SELECT count(*)::int AS n FROM spans
      WHERE name = 'chat old'`.execute(store.db);
    expect(left.rows[0]!.n).toBe(0);
    const fresh = await sql<{ n: number }>`SELECT count(*)::int AS n FROM spans
      WHERE start_ns >= ${ns(Date.now() - DAY_MS)}::bigint`.execute(store.db);
    expect(fresh.rows[0]!.n).toBeGreaterThanOrEqual(sent);
    const median = (during: boolean) => {
      const ms = latencies
        .filter((l) => l.during === during)
        .map((l) => l.ms)
        .sort((a, b) => a - b);
      return ms[Math.floor(ms.length / 2)] ?? NaN;
    };
    console.info(
      `pruned ${PRUNE_ROWS} rows by DROP; ingest batch median ${median(false).toFixed(1)} ms outside the prune, ${median(true).toFixed(1)} ms during it`,
    );
  });
});
