/**
 * One large batch against the event loop (issue 33): a real `rotscope serve` child process takes
 * one protobuf batch of 100,000 GenAI spans (no message content, ~19 MiB, sent gzipped so that
 * it passes the default 8 MiB body limit; it inflates within the default 32 MiB) while this
 * process polls `GET /healthz` every 50 ms. Reports the batch's status and time, and the slowest
 * poll against the 250 ms bar: a poll waits for whatever synchronous stretch the server is in.
 * Also the slowest poll of the 2 s before the batch (the machine's own noise: on a loaded
 * machine the server waits for a core too) and of the BENCH_AFTER_SECONDS (default 10) after
 * its answer, while the evaluator reads what it stored.
 *
 * PostgreSQL when DATABASE_URL is set, and PGlite always; BENCH_BACKENDS=postgres or =pglite
 * picks one. BENCH_SPANS sizes the batch (default 100,000); BENCH_CPU_PROF=DIR profiles the
 * server (bench/server-process.ts). The evaluator is on, as by default.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { createTestDatabase } from '../test/helpers/store.ts';
import { agentRun, encodeBatch, type BenchSpan } from './genai-spans.ts';
import { startServerProcess } from './server-process.ts';

const POLL_MS = 50;
const BAR_MS = 250;

export interface BigBatchRun {
  backend: 'postgres' | 'pglite';
  spans: number;
  bodyMiB: number;
  gzipMiB: number;
  status: number;
  batchSeconds: number;
  polls: number;
  /** The slowest /healthz answer while the batch was in flight (ms), and its ratio to 250 ms. */
  worstPollMs: number;
  ratioToBar: number;
  pollsOver250Ms: number;
  p99PollMs: number;
  /** The slowest poll of the 2 s before the batch and of the seconds after its answer (ms). */
  idleWorstPollMs: number;
  afterWorstPollMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The batch: agent runs of 10 calls, no message content, until `total` spans. */
function bigBody(total: number): { raw: Buffer; spans: number } {
  const base = BigInt(Date.now()) * 1_000_000n;
  const spans: BenchSpan[] = [];
  for (let run = 0; spans.length < total; run++)
    spans.push(...agentRun(run, 10, base + BigInt(run) * 1_000_000_000n, { content: false }));
  spans.length = total;
  return { raw: encodeBatch(spans), spans: total };
}

/** Polls `url` every POLL_MS (one at a time) until `stop` resolves; each answer's latency in ms. */
async function poll(url: string, stop: Promise<unknown>): Promise<number[]> {
  const latencies: number[] = [];
  let done = false;
  void stop.finally(() => (done = true));
  while (!done) {
    const sent = performance.now();
    const response = await fetch(`${url}/healthz`);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`/healthz answered ${response.status}`);
    const latency = performance.now() - sent;
    latencies.push(latency);
    await sleep(Math.max(0, POLL_MS - latency));
  }
  return latencies;
}

async function run(
  backend: BigBatchRun['backend'],
  env: Record<string, string>,
  raw: Buffer,
  gzipped: Buffer,
  spans: number,
): Promise<BigBatchRun> {
  const server = await startServerProcess({ ROTSCOPE_EVALUATOR: 'true', ...env });
  try {
    await poll(server.url, sleep(500)); // warm-up
    const idle = await poll(server.url, sleep(2_000));
    const started = performance.now();
    const sent = fetch(`${server.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' },
      body: gzipped,
    }).then(async (response) => {
      await response.arrayBuffer();
      return { status: response.status, seconds: (performance.now() - started) / 1000 };
    });
    const [latencies, answer] = await Promise.all([poll(server.url, sent), sent]);
    if (answer.status !== 200)
      throw new Error(`the batch got ${answer.status}:\n${server.output().slice(-3000)}`);
    const after = await poll(
      server.url,
      sleep(Number(process.env.BENCH_AFTER_SECONDS ?? 10) * 1000),
    );
    const worst = Math.max(...latencies);
    const sorted = [...latencies].sort((a, b) => a - b);
    return {
      backend,
      spans,
      bodyMiB: Number((raw.length / 2 ** 20).toFixed(1)),
      gzipMiB: Number((gzipped.length / 2 ** 20).toFixed(1)),
      status: answer.status,
      batchSeconds: Number(answer.seconds.toFixed(2)),
      polls: latencies.length,
      worstPollMs: Math.round(worst),
      ratioToBar: Number((worst / BAR_MS).toFixed(2)),
      pollsOver250Ms: latencies.filter((ms) => ms > BAR_MS).length,
      p99PollMs: Math.round(sorted[Math.floor(0.99 * (sorted.length - 1))]!),
      idleWorstPollMs: Math.round(Math.max(...idle)),
      afterWorstPollMs: Math.round(Math.max(...after)),
    };
  } finally {
    await server.stop();
  }
}

export async function benchBigBatch(report: (run: BigBatchRun) => void): Promise<void> {
  const total = Number(process.env.BENCH_SPANS ?? 100_000);
  const { raw, spans } = bigBody(total);
  const gzipped = gzipSync(raw);
  const backends = process.env.BENCH_BACKENDS?.split(',') ?? ['postgres', 'pglite'];
  if (backends.includes('postgres') && process.env.DATABASE_URL) {
    const url = (await createTestDatabase())!;
    try {
      report(await run('postgres', { DATABASE_URL: url }, raw, gzipped, spans));
    } finally {
      const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
      await admin.end();
    }
  }
  if (backends.includes('pglite')) {
    const dir = mkdtempSync(join(tmpdir(), 'rotscope-bench-'));
    try {
      report(await run('pglite', { ROTSCOPE_DATA_DIR: dir }, raw, gzipped, spans));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
