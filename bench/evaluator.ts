/**
 * Per-call evaluation cost at conversation length 10 vs 10,000 (DESIGN §10: within 1.5×).
 *
 * For each backend (PGlite in memory; PostgreSQL in a fresh database when DATABASE_URL is
 * set): two conversations are written straight into `llm_calls` (10 and 10,000 calls) and
 * evaluated once, untimed. Then, alternating between them, one more call is ingested (row +
 * dirty mark, as the receiver does) and one evaluator pass is timed — claim, settings, the
 * new items, the four detectors, state save, commit. The medians and their ratio are reported,
 * with the cost of a late call landing 10 and 5,000 calls back in the long conversation (a
 * replay from the checkpoint before it to the end).
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import pg from 'pg';
import { startEvaluator } from '../src/evaluator/loop.ts';
import { markConversationsDirty } from '../src/store/conversations.ts';
import { openStore, type Db, type Store } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';

const T0 = 1_767_225_600_000_000_000n;
const SECOND = 1_000_000_000n;
const REPETITIONS = 31;
const LATE_REPETITIONS = 5;
const PARTS = JSON.stringify({
  unit: 'tokens',
  total: null,
  system: 3000,
  tools: { read_file: 5000, bash: 2000 },
  source: 'tool_spans',
});

const silentLog = { info() {}, warn() {}, error() {} };

/** Inserts calls `from..to` (1-based seconds) of a conversation in one statement. */
async function insertCalls(db: Db, conversation: string, from: number, to: number): Promise<void> {
  await sql`
    INSERT INTO llm_calls (
      workspace_id, trace_id, span_id, conversation_id, stream_key, run_id, start_ns, end_ns,
      producer, provider, request_model, response_model, input_tokens_raw, output_tokens,
      context_tokens, usage_rule, context_window, window_source, finish_reason_raw, finish_class, parts
    )
    SELECT 'default', ${`trace-${conversation}`}, lpad(to_hex(g * 1000), 16, '0'), ${conversation}, ${conversation},
      ${`run-${conversation}`}, ${T0.toString()}::bigint + g::bigint * ${SECOND.toString()}::bigint,
      ${T0.toString()}::bigint + g::bigint * ${SECOND.toString()}::bigint + 500000000,
      'semconv', 'anthropic', 'claude-sonnet-4', 'claude-sonnet-4', 50000 + (g % 7) * 100, 300,
      50000 + (g % 7) * 100, 'no_cache', 200000, 'catalog', 'end_turn', 'stop', ${PARTS}::jsonb
    FROM generate_series(${from}::int, ${to}::int) AS g
  `.execute(db);
}

/** Ingests calls `from..to` the way the receiver does: rows and the dirty mark, one transaction. */
async function ingest(db: Db, conversation: string, from: number, to: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await insertCalls(trx, conversation, from, to);
    await markConversationsDirty(trx, 'default', [
      {
        conversationId: conversation,
        fromNs: (T0 + BigInt(from) * SECOND).toString(),
        calls: to - from + 1,
      },
    ]);
  });
}

/** A late call in the middle of a conversation: start between two calls, unique span id. */
async function ingestLate(db: Db, conversation: string, second: number, n: number): Promise<void> {
  const start = T0 + BigInt(second) * SECOND + 1000n + BigInt(n);
  await db.transaction().execute(async (trx) => {
    await sql`
      INSERT INTO llm_calls (
        workspace_id, trace_id, span_id, conversation_id, stream_key, run_id, start_ns, end_ns, producer,
        request_model, response_model, context_tokens, context_window, window_source, finish_reason_raw, finish_class
      ) VALUES (
        'default', ${`trace-${conversation}`}, ${`late-${n}`}, ${conversation}, ${conversation}, ${`run-${conversation}`},
        ${start.toString()}, ${(start + 1000n).toString()}, 'semconv', 'claude-sonnet-4', 'claude-sonnet-4',
        50000, 200000, 'catalog', 'end_turn', 'stop'
      )`.execute(trx);
    await markConversationsDirty(trx, 'default', [
      { conversationId: conversation, fromNs: start.toString(), calls: 1 },
    ]);
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

async function measure(store: Store, prefix: string): Promise<Record<string, number>> {
  await migrate(store.db);
  const evaluator = startEvaluator({
    store,
    config: { evaluatorQuietMs: 0, evaluatorPollMs: 3_600_000 },
    log: silentLog,
  });
  const lengths = { short: 10, long: 10_000 } as const;
  try {
    for (const [conversation, length] of Object.entries(lengths))
      await ingest(store.db, conversation, 1, length);
    const setupStart = performance.now();
    await evaluator.runOnce();
    const setupMs = performance.now() - setupStart;

    const next: Record<'short' | 'long', number> = { short: lengths.short, long: lengths.long };
    const times: Record<'short' | 'long', number[]> = { short: [], long: [] };
    for (let rep = 0; rep < REPETITIONS; rep++) {
      for (const conversation of rep % 2
        ? (['long', 'short'] as const)
        : (['short', 'long'] as const)) {
        next[conversation] += 1;
        await ingest(store.db, conversation, next[conversation], next[conversation]);
        const start = performance.now();
        const evaluated = await evaluator.runOnce();
        times[conversation].push(performance.now() - start);
        if (evaluated !== 1) throw new Error(`expected one evaluation, got ${evaluated}`);
      }
    }

    // Late calls 10 and 5,000 calls back: a checkpointed replay of the tail.
    const late: Record<'near' | 'far', number[]> = { near: [], far: [] };
    for (let n = 0; n < LATE_REPETITIONS; n++) {
      for (const [which, back] of [
        ['near', 10],
        ['far', 5_000],
      ] as const) {
        await ingestLate(store.db, 'long', next.long - back, late.near.length + late.far.length);
        const start = performance.now();
        await evaluator.runOnce();
        late[which].push(performance.now() - start);
      }
    }

    const call10 = median(times.short);
    const call10000 = median(times.long);
    return {
      [`${prefix}.call10_ms`]: round(call10),
      [`${prefix}.call10000_ms`]: round(call10000),
      [`${prefix}.ratio_10000_vs_10`]: round(call10000 / call10),
      [`${prefix}.late_call_10_back_ms`]: round(median(late.near)),
      [`${prefix}.late_call_5000_back_ms`]: round(median(late.far)),
      [`${prefix}.initial_10010_calls_ms`]: round(setupMs),
    };
  } finally {
    await evaluator.stop();
  }
}

async function withFreshPostgres<T>(baseUrl: string, run: (url: string) => Promise<T>): Promise<T> {
  const name = `rotscope_bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  try {
    return await run(url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

/**
 * Runs the benchmark; keys are `evaluator.<backend>.<metric>` (milliseconds, or a ratio).
 * PostgreSQL is measured only when DATABASE_URL is set.
 */
export async function benchEvaluator(): Promise<Record<string, number>> {
  const results: Record<string, number> = {};
  const lite = await openStore({ dataDir: 'memory://' });
  try {
    Object.assign(results, await measure(lite, 'evaluator.pglite'));
  } finally {
    await lite.close();
  }
  const baseUrl = process.env.DATABASE_URL;
  if (baseUrl) {
    await withFreshPostgres(baseUrl, async (url) => {
      const store = await openStore({ databaseUrl: url, dataDir: 'memory://' });
      try {
        Object.assign(results, await measure(store, 'evaluator.postgres'));
      } finally {
        await store.close();
      }
    });
  }
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchEvaluator(), null, 2));
}
