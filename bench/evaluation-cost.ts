/**
 * Evaluation cost alone (issue 39; `npm run bench -- evaluation-cost`): the ingest bench's load
 * is stored by a `rotscope serve` child with the evaluator off, then this process evaluates
 * every conversation it left dirty (src/evaluator/loop.ts with its defaults, nothing settling
 * meanwhile) and reports the CPU of this process and of PostgreSQL's backends per stored span,
 * BENCH_ROUNDS times on fresh copies of the stored database. No ingest runs beside it, so the
 * figures are the evaluator's alone: `ingest`'s evaluator-on minus evaluator-off is the same
 * cost plus what sharing the machine's cores with ingest adds. PostgreSQL only (DATABASE_URL).
 * BENCH_FROM_DIST=1 evaluates with the compiled dist/ (run `npm run build` first), else the
 * source; BENCH_CPU_PROF=DIR writes a CPU profile of each round; BENCH_LOG_STATEMENTS=1 logs
 * every statement's duration to the server's log; BENCH_BATCH sets `batchSize`; BENCH_KEEP=1
 * keeps the stored load's database and each round's. BENCH_FROM_MEMORY=1: each round stores the load itself, in
 * this process, into a fresh database, through an app whose ingest hands the calls it stores to
 * the evaluator's memory (src/store/call-memo.ts), as `rotscope serve` does; the evaluation
 * then judges them from memory (the ingest's CPU is not counted).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import type * as App from '../src/api/app.ts';
import type * as Config from '../src/config.ts';
import type * as Loop from '../src/evaluator/loop.ts';
import type * as Memo from '../src/store/call-memo.ts';
import type * as Db from '../src/store/db.ts';
import { createTestDatabase } from '../test/helpers/store.ts';
import { databaseCpu, microsEach, ownCpuSeconds } from './cpu-time.ts';
import { ingestLoad, sendAll } from './ingest.ts';
import { startServerProcess } from './server-process.ts';

const silentLog = { info() {}, warn() {}, error() {} };

// The compiled evaluator users run (BENCH_FROM_DIST=1, after `npm run build`), else the source.
const fromDist = process.env.BENCH_FROM_DIST === '1';
/** A module of rotscope (`evaluator/loop`), compiled or source as above. */
const rotscope = async <T>(module: string): Promise<T> =>
  (await import(fromDist ? `../dist/${module}.js` : `../src/${module}.ts`)) as T;
const { startEvaluator } = await rotscope<typeof Loop>('evaluator/loop');
const { openStore } = await rotscope<typeof Db>('store/db');
const { buildApp } = await rotscope<typeof App>('api/app');
const { CallMemo } = await rotscope<typeof Memo>('store/call-memo');
const { defaultConfig } = await rotscope<typeof Config>('config');
const fromMemory = process.env.BENCH_FROM_MEMORY === '1';

/**
 * BENCH_FROM_MEMORY: stores `bodies` into the database at `url` through an app in this process
 * whose ingest hands its calls to the returned memory (no evaluator runs meanwhile).
 */
async function storedInProcess(url: string, bodies: readonly Buffer[]) {
  const store = await openStore({ databaseUrl: url, dataDir: '' });
  const callMemo = new CallMemo();
  const config = defaultConfig({ maxInflightIngest: 64, maxIngestCommitWaitMs: 0 });
  const built = await buildApp({ store, config, callMemo });
  try {
    const address = await built.app.listen({ host: '127.0.0.1', port: 0 });
    await sendAll(address, bodies);
  } finally {
    await built.app.close();
    await store.close();
  }
  return callMemo;
}

/** BENCH_CPU_PROF=DIR: a CPU profile of the evaluation rounds only (not the load before them). */
async function profiled<T>(name: string, run: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_CPU_PROF;
  if (!dir) return run();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  // every 200 µs (the default is 1 ms): an evaluation round lasts a few hundred ms
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  try {
    return await run();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}

export async function benchEvaluationCost(content: boolean, total: number, rounds: number) {
  const source = (await createTestDatabase())!;
  const server = await startServerProcess({
    DATABASE_URL: source,
    ROTSCOPE_EVALUATOR: 'false',
    ROTSCOPE_MAX_INFLIGHT_INGEST: '64',
    ROTSCOPE_MAX_INGEST_COMMIT_WAIT_MS: '0',
  });
  const { bodies, genAiSpans } = ingestLoad(total, content);
  if (!fromMemory) await sendAll(server.url, bodies);
  await server.stop();
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  const sourceName = new URL(source).pathname.slice(1);
  const runs = [];
  try {
    for (let round = 0; round < rounds; round++) {
      const name = `${sourceName}_r${round}`;
      await admin.query(`CREATE DATABASE ${name} TEMPLATE ${sourceName}`);
      if (process.env.BENCH_LOG_STATEMENTS === '1')
        await admin.query(`ALTER DATABASE ${name} SET log_min_duration_statement = 0`);
      const url = new URL(source);
      url.pathname = `/${name}`;
      const callMemo = fromMemory ? await storedInProcess(url.toString(), bodies) : undefined;
      const store = await openStore({ databaseUrl: url.toString(), dataDir: '' });
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      try {
        const evaluator = startEvaluator({
          store,
          config: { evaluatorQuietMs: 0, evaluatorPollMs: 3_600_000 },
          log: silentLog,
          maxWaitMs: 0,
          maxPerRun: 1_000_000,
          batchSize: Number(process.env.BENCH_BATCH ?? 16),
          callMemo,
        });
        await store.db.selectFrom('workspaces').select('id').execute(); // pool warm
        const database = await databaseCpu((text) => client.query(text));
        const own = ownCpuSeconds();
        const ownUsage = process.cpuUsage();
        const started = performance.now();
        let evaluated = 0;
        await profiled(`evaluation-${content ? 'content' : 'plain'}-${round}`, async () => {
          for (let n; (n = await evaluator.runOnce()) > 0;) evaluated += n;
        });
        const ms = performance.now() - started;
        const server = ownCpuSeconds() - own;
        const usage = process.cpuUsage(ownUsage);
        const db = await database.stop();
        await evaluator.stop();
        const sizes = (
          await client.query(
            'SELECT avg(length(state::text))::int AS text, avg(pg_column_size(state))::int AS stored FROM conversations',
          )
        ).rows[0] as { text: number; stored: number };
        runs.push({
          content,
          round,
          ...(callMemo ? { fromMemory: callMemo.stats.used } : {}),
          conversations: evaluated,
          ms: Math.round(ms),
          userMs: Math.round(usage.user / 1000),
          systemMs: Math.round(usage.system / 1000),
          stateBytes: sizes,
          cpuMicrosPerSpan: {
            server: microsEach(server, genAiSpans),
            database: microsEach(db, genAiSpans),
          },
          // the same unrounded, for comparisons finer than a microsecond a span
          cpuMs: {
            server: Math.round(server * 1000),
            database: db === null ? null : Math.round(db * 1000),
          },
        });
      } finally {
        await client.end();
        await store.close();
        if (process.env.BENCH_KEEP === '1') console.error(`kept ${name}`);
        else await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }
    }
  } finally {
    if (process.env.BENCH_KEEP === '1') console.error(`kept ${sourceName}`);
    else await admin.query(`DROP DATABASE IF EXISTS ${sourceName} WITH (FORCE)`);
    await admin.end();
  }
  return runs;
}

/**
 * Both loads (BENCH_CONTENT=0 or =1: one), BENCH_ROUNDS rounds each (default 3; the first
 * warms the JIT), BENCH_SPANS spans a load (default 24,576). Nothing without DATABASE_URL.
 */
export async function benchEvaluationCostRuns(report: (run: object) => void): Promise<void> {
  if (!process.env.DATABASE_URL) {
    console.error('evaluation-cost: PostgreSQL only; set DATABASE_URL to run it');
    return;
  }
  const total = Number(process.env.BENCH_SPANS ?? 48 * 512);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const loads =
    process.env.BENCH_CONTENT === '1'
      ? [true]
      : process.env.BENCH_CONTENT === '0'
        ? [false]
        : [false, true];
  for (const content of loads)
    for (const run of await benchEvaluationCost(content, total, rounds)) report(run);
}

// `npx tsx bench/evaluation-cost.ts` runs it alone (also in a checkout whose bench/index.ts
// does not know it: the paired before/after runs).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  await benchEvaluationCostRuns((run) =>
    console.log(JSON.stringify({ bench: 'evaluation-cost', ...run })),
  );
