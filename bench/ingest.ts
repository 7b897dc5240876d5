/**
 * Ingest benchmark (DESIGN §10, issue 10 §1): a real `rotscope serve` child process takes
 * realistic GenAI spans over OTLP/HTTP protobuf (batches of 512, 8 concurrent senders in this
 * process, which only sends pre-encoded bodies), end to end: decode, normalize, store, with
 * the evaluator running. The baseline, in the same run and the same database: a binary `COPY`
 * into a table like `spans` of the raw span rows of the same load (the rows the server stored
 * before issue 22, and stores with ROTSCOPE_KEEP_RAW_SPANS=true), one row per span of GenAI
 * interest, encoded by this process before the timing starts.
 *
 * Two loads: chat spans without message content, and with 2–5 KB of it (system instructions,
 * input and output messages). PostgreSQL when DATABASE_URL is set, and PGlite (against PGlite's
 * own `COPY … FROM '/dev/blob'`) always; BENCH_BACKENDS=postgres or =pglite picks one.
 * BENCH_SPANS (default 24,576 = 48 batches) sizes each load: at that length the server's
 * evaluator judges each conversation once, mostly after the load and before its code is warm,
 * so what evaluation adds is measured at BENCH_SPANS=98304 (issue 39's fourth round,
 * docs/scaling.md). BENCH_NO_EVALUATOR=1 turns the evaluator off. The server runs from src/ (ROTSCOPE_FROM_SOURCE=1) unless BENCH_FROM_DIST=1;
 * BENCH_CPU_PROF=DIR profiles it (`node --cpu-prof`). Each run reports CPU per span by process
 * (from /proc) and, on PostgreSQL, the evaluation work left when the load ends (`afterLoad`):
 * the rate alone would credit a server for evaluating later.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { normalizeSpans } from '../src/ingest/index.ts';
import { decodeTraces } from '../src/otlp/decode.ts';
import { CopyWriter, type CopyType } from '../src/store/copy-binary.ts';
import { copyIn } from '../src/store/copy-in.ts';
import { SPAN_COLUMNS, spanRow } from '../src/store/ingest.ts';
import { createTestDatabase } from '../test/helpers/store.ts';
import { databaseCpu, microsEach, ownCpuSeconds, processCpuSeconds } from './cpu-time.ts';
import { agentRun, encodeBatch, type BenchSpan } from './genai-spans.ts';
import { startServerProcess } from './server-process.ts';

const BATCH = 512;
const SENDERS = 8;

export interface IngestRun {
  backend: 'postgres' | 'pglite';
  content: boolean;
  spansStored: number;
  ingestSpansPerSecond: number;
  copyRowsPerSecond: number;
  ratioToCopy: number;
  p50Ms: number;
  p99Ms: number;
  /**
   * CPU per stored span during the load (µs, user + system, from /proc): the server process
   * (on PGlite the database runs in it), PostgreSQL's backends, the load generator.
   */
  cpuMicrosPerSpan: { server: number | null; database: number | null; generator: number };
  /** CPU per row of the baseline COPY (µs): the database (PGlite: in this process). */
  copyCpuMicrosPerRow: number | null;
  /**
   * PostgreSQL: after the load, the time until no conversation is left to evaluate (ms; it
   * includes the evaluator's quiet period) and the server's and database's CPU per stored
   * span in that time: the evaluation work the load left behind. Null on PGlite (its data
   * directory is the server's while it runs).
   */
  afterLoad: { drainMs: number; server: number | null; database: number | null } | null;
  /**
   * The server's evaluations by where their new calls came from (`rotscope_evaluations_total`:
   * its memory of what it just stored, or read back), and the batches they were claimed in
   * (`rotscope_evaluator_batches_total`), warm-up included; null with the evaluator off.
   */
  evaluations: { memory: number; database: number; batches: number } | null;
}

/** The server's `rotscope_evaluations_total` by `calls` label, from /metrics. */
async function evaluationsOf(url: string): Promise<IngestRun['evaluations']> {
  if (!evaluatorOn()) return null;
  const text = await (await fetch(`${url}/metrics`)).text();
  const count = (calls: string) =>
    Number(
      new RegExp(`^rotscope_evaluations_total\\{calls="${calls}"\\} (\\S+)$`, 'm').exec(
        text,
      )?.[1] ?? NaN,
    );
  const batches = Number(/^rotscope_evaluator_batches_total (\S+)$/m.exec(text)?.[1] ?? NaN);
  return { memory: count('memory'), database: count('database'), batches };
}

/** CPU seconds spent during a load, by process. */
interface LoadCpu {
  server: number | null;
  database: number | null;
  generator: number;
}

/** Measures the CPU of the server, the generator and (PostgreSQL) the database around `load`. */
async function measuredLoad<T>(
  serverPid: number,
  query: ((text: string) => Promise<{ rows: unknown[] }>) | null,
  load: () => Promise<T>,
): Promise<{ value: T; cpu: LoadCpu }> {
  const server = processCpuSeconds(serverPid);
  const database = query ? await databaseCpu(query) : null;
  const generator = ownCpuSeconds();
  const value = await load();
  const generatorSeconds = ownCpuSeconds() - generator;
  const serverAfter = processCpuSeconds(serverPid);
  return {
    value,
    cpu: {
      server: server === null || serverAfter === null ? null : serverAfter - server,
      database: database ? await database.stop() : null,
      generator: generatorSeconds,
    },
  };
}

/** Bodies of exactly 512 spans (agent runs split across batches, as a BatchSpanProcessor does). */
export function ingestBodies(total: number, content: boolean, runOffset = 0): Buffer[] {
  return ingestLoad(total, content, runOffset).bodies;
}

/** The bodies, and how many of their spans are of GenAI interest (stored; the HTTP spans are not). */
export function ingestLoad(
  total: number,
  content: boolean,
  runOffset = 0,
): { bodies: Buffer[]; genAiSpans: number } {
  const base = BigInt(Date.now()) * 1_000_000n;
  const spans: BenchSpan[] = [];
  for (let run = runOffset; spans.length < total; run++)
    spans.push(...agentRun(run, 10, base + BigInt(run) * 1_000_000_000n, { content }));
  const bodies: Buffer[] = [];
  let genAiSpans = 0;
  for (let i = 0; i + BATCH <= spans.length; i += BATCH) {
    const batch = spans.slice(i, i + BATCH);
    bodies.push(encodeBatch(batch));
    genAiSpans += batch.filter((span) => !span.name.startsWith('GET ')).length;
  }
  return { bodies, genAiSpans };
}

/** Sends the bodies with `senders` concurrent senders; returns seconds and each request's ms. */
export async function sendAll(
  url: string,
  bodies: readonly Buffer[],
  senders = SENDERS,
): Promise<{ seconds: number; latencies: number[] }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: senders }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        const sent = performance.now();
        const response = await fetch(`${url}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-protobuf' },
          body,
        });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`ingest answered ${response.status}`);
        latencies.push(performance.now() - sent);
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, latencies };
}

export const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return Number(
    (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0).toFixed(1),
  );
};

const evaluatorOn = () => process.env.BENCH_NO_EVALUATOR !== '1';

function serverEnv(): Record<string, string> {
  return {
    ROTSCOPE_MAX_INFLIGHT_INGEST: '64',
    // the load is saturation on purpose: no 429s for a commit queue that runs behind
    ROTSCOPE_MAX_INGEST_COMMIT_WAIT_MS: '0',
    ROTSCOPE_EVALUATOR: evaluatorOn() ? 'true' : 'false',
  };
}

/** Waits until no conversation is dirty (the evaluator caught up); returns the ms it took. */
async function untilEvaluated(
  query: (text: string) => Promise<{ rows: unknown[] }>,
  timeoutMs = 120_000,
): Promise<number> {
  const started = performance.now();
  for (;;) {
    const { rows } = await query('SELECT count(*)::int AS n FROM conversations WHERE dirty');
    if ((rows[0] as { n: number }).n === 0) return performance.now() - started;
    if (performance.now() - started > timeoutMs)
      throw new Error(`conversations still dirty after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function countCalls(query: (text: string) => Promise<{ rows: unknown[] }>) {
  const result = await query('SELECT count(*)::int AS n FROM llm_calls');
  return (result.rows[0] as { n: number }).n;
}

/** The binary COPY type of each raw `spans` column (migrations 0001, 0010). */
const SPAN_COPY_TYPES: Record<string, CopyType> = {
  workspace_id: 'text',
  trace_id: 'text',
  span_id: 'text',
  parent_span_id: 'text',
  name: 'text',
  kind: 'int2',
  start_ns: 'int8',
  end_ns: 'int8',
  status_code: 'int2',
  status_message: 'text',
  scope_name: 'text',
  scope_version: 'text',
  attributes: 'jsonb',
  events: 'jsonb',
  links: 'jsonb',
  resource: 'jsonb',
  role: 'text',
};

/**
 * The baseline's rows: the raw span rows of the load's spans of GenAI interest, as binary
 * COPY data (the rows `insertSpans` in src/store/ingest.ts writes), and how many.
 */
function baselineRows(bodies: readonly Buffer[]): { data: Buffer; rows: number } {
  const writer = new CopyWriter(SPAN_COLUMNS.map((column) => SPAN_COPY_TYPES[column]!));
  let rows = 0;
  const ctx = { workspaceId: 'default', captureContent: true, windowOverrides: [] };
  for (const body of bodies) {
    const decoded = decodeTraces(body, 'protobuf');
    if (!decoded.ok) throw new Error(decoded.reason);
    for (const span of normalizeSpans(decoded.value.items, ctx).keep) {
      const row = spanRow('default', span);
      writer.row(SPAN_COLUMNS.map((column) => row[column]));
      rows++;
    }
  }
  return { data: writer.finish(), rows };
}

const BASELINE_COLUMNS = SPAN_COLUMNS.join(', ');

async function runPostgres(content: boolean, total: number): Promise<IngestRun> {
  const url = (await createTestDatabase())!;
  const client = new pg.Client({ connectionString: url });
  try {
    const server = await startServerProcess({ ...serverEnv(), DATABASE_URL: url });
    await client.connect();
    // Bodies are made first: a pause longer than the server's keep-alive timeout between
    // the warm-up and the load would close the senders' idle connections under them.
    const { bodies, genAiSpans } = ingestLoad(total, content);
    const baseline = baselineRows(bodies);
    await sendAll(server.url, ingestBodies(4 * BATCH, content, 1_000_000)); // warm-up
    const before = await countCalls((text) => client.query(text));
    const {
      value: { seconds, latencies },
      cpu,
    } = await measuredLoad(
      server.process.pid!,
      (text) => client.query(text),
      () =>
        sendAll(server.url, bodies).catch((error: unknown) => {
          throw new Error(`${String(error)}; the server printed:\n${server.output().slice(-3000)}`);
        }),
    );
    // every span of GenAI interest was stored (200 only after commit; none dropped but HTTP)
    const stored = genAiSpans;
    if ((await countCalls((text) => client.query(text))) === before)
      throw new Error('the load stored no call');
    // without the evaluator nothing drains: no afterLoad
    const drained = evaluatorOn()
      ? await measuredLoad(
          server.process.pid!,
          (text) => client.query(text),
          () => untilEvaluated((text) => client.query(text)),
        )
      : null;
    const evaluations = await evaluationsOf(server.url);
    await server.stop();

    // The baseline: the load's span rows, binary COPY into a table like spans, one transaction.
    const copied = baseline.rows;
    await client.query('CREATE TABLE spans_copy (LIKE spans INCLUDING ALL)');
    const backend = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0] as {
      pid: number;
    };
    const copyCpu = processCpuSeconds(backend.pid, 'postgres');
    const copyStarted = performance.now();
    await copyIn(
      client,
      `COPY spans_copy (${BASELINE_COLUMNS}) FROM STDIN (FORMAT binary)`,
      baseline.data,
    );
    const copySeconds = (performance.now() - copyStarted) / 1000;
    const copyCpuAfter = processCpuSeconds(backend.pid, 'postgres');
    return result('postgres', content, stored, seconds, copied, copySeconds, latencies, {
      load: cpu,
      copy: copyCpu === null || copyCpuAfter === null ? null : copyCpuAfter - copyCpu,
      ...(drained ? { drain: { ms: drained.value, cpu: drained.cpu } } : {}),
      evaluations,
    });
  } finally {
    await client.end().catch(() => {});
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
    await admin.end();
  }
}

async function runPglite(content: boolean, total: number): Promise<IngestRun> {
  const dir = mkdtempSync(join(tmpdir(), 'rotscope-bench-'));
  try {
    const server = await startServerProcess({ ...serverEnv(), ROTSCOPE_DATA_DIR: dir });
    const { bodies, genAiSpans } = ingestLoad(total, content);
    const baseline = baselineRows(bodies);
    await sendAll(server.url, ingestBodies(4 * BATCH, content, 1_000_000)); // warm-up
    const {
      value: { seconds, latencies },
      cpu,
    } = await measuredLoad(server.process.pid!, null, () => sendAll(server.url, bodies));
    await server.stop();
    const lite = await PGlite.create(dir);
    try {
      const copied = baseline.rows;
      await lite.exec('CREATE TABLE spans_copy (LIKE spans INCLUDING ALL)');
      const copyCpu = ownCpuSeconds();
      const copyStarted = performance.now();
      await lite.query(
        `COPY spans_copy (${BASELINE_COLUMNS}) FROM '/dev/blob' (FORMAT binary)`,
        [],
        {
          blob: new Blob([baseline.data]),
        },
      );
      const copySeconds = (performance.now() - copyStarted) / 1000;
      const copyCpuSeconds = ownCpuSeconds() - copyCpu;
      const stored = genAiSpans;
      return result('pglite', content, stored, seconds, copied, copySeconds, latencies, {
        load: cpu,
        copy: copyCpuSeconds,
      });
    } finally {
      await lite.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function result(
  backend: IngestRun['backend'],
  content: boolean,
  stored: number,
  seconds: number,
  copied: number,
  copySeconds: number,
  latencies: number[],
  cpu: {
    load: LoadCpu;
    copy: number | null;
    drain?: { ms: number; cpu: LoadCpu };
    evaluations?: IngestRun['evaluations'];
  },
): IngestRun {
  const ingestRate = stored / seconds;
  const copyRate = copied / copySeconds;
  return {
    backend,
    content,
    spansStored: stored,
    ingestSpansPerSecond: Math.round(ingestRate),
    copyRowsPerSecond: Math.round(copyRate),
    ratioToCopy: Number((ingestRate / copyRate).toFixed(3)),
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    cpuMicrosPerSpan: {
      server: microsEach(cpu.load.server, stored),
      database: microsEach(cpu.load.database, stored),
      generator: microsEach(cpu.load.generator, stored)!,
    },
    copyCpuMicrosPerRow: microsEach(cpu.copy, copied),
    afterLoad: cpu.drain
      ? {
          drainMs: Math.round(cpu.drain.ms),
          server: microsEach(cpu.drain.cpu.server, stored),
          database: microsEach(cpu.drain.cpu.database, stored),
        }
      : null,
    evaluations: cpu.evaluations ?? null,
  };
}

/** Runs every load; `report` gets each run as it ends, so a later failure loses none of them. */
export async function benchIngest(
  report: (run: IngestRun) => void = () => {},
): Promise<IngestRun[]> {
  const total = Number(process.env.BENCH_SPANS ?? 48 * BATCH);
  const wanted = process.env.BENCH_BACKENDS?.split(',') ?? ['postgres', 'pglite'];
  const runs: IngestRun[] = [];
  const record = (run: IngestRun) => {
    runs.push(run);
    report(run);
  };
  for (const content of [false, true]) {
    if (process.env.DATABASE_URL && wanted.includes('postgres'))
      record(await runPostgres(content, total));
    if (wanted.includes('pglite')) record(await runPglite(content, content ? total / 2 : total));
  }
  return runs;
}
