/**
 * Ordinary concurrent ingest over shared conversations (issue 33): many exporters send batches
 * whose calls fall in the same conversations, in different orders, while the evaluator claims
 * and saves those conversations. Group commit puts several requests in one transaction and runs
 * two transactions at once, so the row locks they take must follow one order across the whole
 * group: otherwise PostgreSQL finds a deadlock and a batch fails (a 500 exporters drop). Every
 * batch must commit and every call be stored once, and (PostgreSQL) the database must have found
 * no deadlock at all: ingest retries one, so a batch that commits does not show it. PGlite runs
 * one transaction at a time; the test runs on both.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startEvaluator } from '../../../src/evaluator/loop.ts';
import { IngestPipeline } from '../../../src/receiver/pipeline.ts';
import { openStore, type Store } from '../../../src/store/db.ts';
import { ensureWorkspace } from '../../../src/store/workspaces.ts';
import { genAiChatAttributes } from '../../helpers/otel.ts';
import { createTestStore, type TestStore } from '../../helpers/store.ts';
import { span } from '../../unit/ingest/helpers.ts';

const SENDERS = 16;
const BATCHES_PER_SENDER = 8;
const SPANS_PER_BATCH = 50;
const CONVERSATIONS = 97;

/** Batch `b` of sender `s`: 50 calls, each in a conversation picked by a fixed shuffle. */
function batch(s: number, b: number) {
  return Array.from({ length: SPANS_PER_BATCH }, (_, i) => {
    const n = (s * BATCHES_PER_SENDER + b) * SPANS_PER_BATCH + i;
    const conversation = (n * 7919 + s * 31) % CONVERSATIONS;
    return span({
      traceId: `e${n.toString(16).padStart(31, '0')}`,
      spanId: `f${n.toString(16).padStart(15, '0')}`,
      name: 'chat claude-sonnet-4-5',
      kind: 3,
      startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(n) * 1_000_000n),
      endTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(n) * 1_000_000n + 500_000n),
      attributes: genAiChatAttributes(n % 50, `shared-${conversation}`),
    });
  });
}

describe('concurrent batches over shared conversations', () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await createTestStore();
    await ensureWorkspace(store.db, 'ws');
  });
  afterAll(() => store?.close());

  /**
   * The store the senders and the evaluator use, and the deadlocks PostgreSQL found in its
   * sessions once they ended (a session reports them to the statistics when it ends). On
   * PostgreSQL a pool of its own on the test's database; on PGlite the test's store.
   */
  async function ownStore(): Promise<{ store: Store; deadlocks(): Promise<number> }> {
    if (!store.url) return { store, deadlocks: async () => 0 };
    const admin = new pg.Client({ connectionString: store.url });
    await admin.connect();
    onTestFinished(() => admin.end());
    const sessions = async () =>
      (
        await admin.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()',
        )
      ).rows[0]!.n;
    const before = await sessions();
    const own = await openStore({ databaseUrl: store.url, dataDir: 'memory://' });
    let closed = false;
    onTestFinished(() => (closed ? undefined : own.close()));
    return {
      store: own,
      async deadlocks() {
        await own.close();
        closed = true;
        await expect.poll(sessions).toBe(before);
        const { rows } = await admin.query<{ deadlocks: string }>(
          'SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()',
        );
        return Number(rows[0]!.deadlocks);
      },
    };
  }

  it('all commit, with the evaluator claiming the same conversations meanwhile', async () => {
    const own = await ownStore();
    const pipeline = new IngestPipeline(own.store);
    const silent = { info() {}, warn() {}, error() {} };
    const evaluator = startEvaluator({
      store: own.store,
      config: { evaluatorQuietMs: 0, evaluatorPollMs: 5 },
      log: silent,
      batchSize: 16,
    });
    const failures: unknown[] = [];
    try {
      await Promise.all(
        Array.from({ length: SENDERS }, async (_, s) => {
          for (let b = 0; b < BATCHES_PER_SENDER; b++)
            await pipeline.ingestSpans('ws', batch(s, b)).catch((e: unknown) => failures.push(e));
        }),
      );
    } finally {
      await evaluator.stop();
    }
    expect(failures.map((e) => String(e))).toEqual([]);
    const { count } = await store.db
      .selectFrom('llm_calls')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('workspace_id', '=', 'ws')
      .executeTakeFirstOrThrow();
    expect(Number(count)).toBe(SENDERS * BATCHES_PER_SENDER * SPANS_PER_BATCH);
    expect(await own.deadlocks()).toBe(0);
    // eight senders' batches and an evaluator on a loaded two-core machine: seconds of work
  }, 120_000);

  it('writes a batch of more conversations than one statement binds (PGlite: 32,767 parameters)', async () => {
    const pipeline = new IngestPipeline(store);
    const conversations = 4_000; // 10 parameters each in one statement: 40,000
    const spans = Array.from({ length: conversations }, (_, n) =>
      span({
        traceId: `b${n.toString(16).padStart(31, '0')}`,
        spanId: `b${n.toString(16).padStart(15, '0')}`,
        name: 'chat claude-sonnet-4-5',
        kind: 3,
        attributes: genAiChatAttributes(1, `wide-${n}`),
      }),
    );
    await pipeline.ingestSpans('ws', spans);
    const { count } = await store.db
      .selectFrom('conversations')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('workspace_id', '=', 'ws')
      .where('id', 'like', 'wide-%')
      .where('dirty', '=', true)
      .executeTakeFirstOrThrow();
    expect(Number(count)).toBe(conversations);
  });
});
