/**
 * Ingest benchmark (DESIGN §10): realistic GenAI spans over OTLP/HTTP protobuf in batches,
 * end to end (decode, normalize, store; the evaluator runs too), against a raw COPY of the
 * same span rows into a copy of the spans table in the same database, in the same run.
 * BENCH_NO_EVALUATOR=1 measures ingest alone (no evaluator or notifier competing for the
 * database; on PGlite they share its single connection).
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import pino from 'pino';
import { buildApp } from '../src/api/app.ts';
import { defaultConfig } from '../src/config.ts';
import { startBackgroundLoops } from '../src/loops.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { createTestDatabase } from '../test/helpers/store.ts';
import { agentRun, encodeBatch, type BenchSpan } from './genai-spans.ts';

const COPY_COLUMNS = [
  'workspace_id',
  'trace_id',
  'span_id',
  'parent_span_id',
  'name',
  'kind',
  'start_ns',
  'end_ns',
  'status_code',
  'status_message',
  'scope_name',
  'scope_version',
  'attributes',
  'events',
  'links',
  'resource',
  'role',
  'received_at',
] as const;

function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text =
    value instanceof Date
      ? value.toISOString()
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);
  return `"${text.replaceAll('"', '""')}"`;
}

export interface IngestBenchResult {
  backend: string;
  spans: number;
  ingestSpansPerSecond: number;
  copyRowsPerSecond: number;
  ratioToCopy: number;
}

export async function benchIngest(
  options: { runs?: number; callsPerRun?: number; concurrency?: number } = {},
): Promise<IngestBenchResult> {
  const runs = options.runs ?? 300;
  const callsPerRun = options.callsPerRun ?? 10;
  const concurrency = options.concurrency ?? 4;
  const url = await createTestDatabase();
  const lite = url ? undefined : await PGlite.create({ parsers: { 20: (v: string) => v } });
  const store: Store = await openStore({
    databaseUrl: url,
    dataDir: 'memory://',
    ...(lite ? { pglite: lite } : {}),
  });
  await migrate(store.db);
  const config = defaultConfig({
    logLevel: 'silent',
    maxInflightIngest: 64,
    evaluator: process.env.BENCH_NO_EVALUATOR !== '1',
    notifier: process.env.BENCH_NO_EVALUATOR !== '1',
  });
  const built = await buildApp({ store, config });
  const loops = await startBackgroundLoops({ store, config, log: pino({ level: 'silent' }) });
  const address = await built.app.listen({ host: '127.0.0.1', port: 0 });

  // Batches of about 512 spans, as the SDK's BatchSpanProcessor sends them.
  const base = BigInt(Date.now()) * 1_000_000n;
  const batches: Buffer[] = [];
  let pending: BenchSpan[] = [];
  let total = 0;
  for (let run = 0; run < runs; run++) {
    pending.push(...agentRun(run, callsPerRun, base + BigInt(run) * 1_000_000_000n));
    if (pending.length >= 512 || run === runs - 1) {
      batches.push(encodeBatch(pending));
      total += pending.length;
      pending = [];
    }
  }
  const send = async (body: Buffer) => {
    const response = await fetch(`${address}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body,
    });
    if (response.status !== 200) throw new Error(`ingest answered ${response.status}`);
    await response.arrayBuffer();
  };
  await send(encodeBatch(agentRun(-1, callsPerRun, base - 10_000_000_000n))); // warm-up
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < batches.length) await send(batches[next++]!);
    }),
  );
  const ingestSeconds = (performance.now() - started) / 1000;

  const rows = await store.db.selectFrom('spans').selectAll().execute();
  const csv =
    rows.map((row) => COPY_COLUMNS.map((column) => csvField(row[column])).join(',')).join('\n') +
    '\n';
  const createCopy = 'CREATE TABLE spans_copy (LIKE spans INCLUDING ALL)';
  const copySql = `COPY spans_copy (${COPY_COLUMNS.join(', ')}) FROM STDIN WITH (FORMAT csv)`;
  let copySeconds: number;
  if (url) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(createCopy);
    const copyStarted = performance.now();
    await pipeline(Readable.from([csv]), client.query(copyFrom(copySql)));
    copySeconds = (performance.now() - copyStarted) / 1000;
    await client.end();
  } else {
    await lite!.exec(createCopy);
    const copyStarted = performance.now();
    await lite!.query(copySql.replace('STDIN', "'/dev/blob'"), [], { blob: new Blob([csv]) });
    copySeconds = (performance.now() - copyStarted) / 1000;
  }

  await built.app.close();
  await loops.stop();
  await store.close();
  if (url) {
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
    await admin.end();
  }
  const ingestRate = total / ingestSeconds;
  const copyRate = rows.length / copySeconds;
  return {
    backend: url ? 'postgres' : 'pglite',
    spans: total,
    ingestSpansPerSecond: Math.round(ingestRate),
    copyRowsPerSecond: Math.round(copyRate),
    ratioToCopy: Number((ingestRate / copyRate).toFixed(3)),
  };
}
