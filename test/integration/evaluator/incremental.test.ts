import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Detector } from '../../../src/detectors/types.ts';
import type { EvaluationResult } from '../../../src/evaluator/evaluate.ts';
import { TestClock } from '../../helpers/clock.ts';
import { createTestStore, type TestStore } from '../../helpers/store.ts';
import {
  call,
  compaction,
  dropDetector,
  findingKeys,
  fullDetector,
  ingest,
  testEvaluator,
} from './helpers.ts';

let store: TestStore;
beforeAll(async () => {
  store = await createTestStore();
});
afterAll(async () => {
  await store?.close();
});
beforeEach(async () => {
  await store.db.deleteFrom('findings').execute();
  await store.db.deleteFrom('conversations').execute();
  await store.db.deleteFrom('compactions').execute();
  await store.db.deleteFrom('llm_calls').execute();
});

/** Runs one evaluator pass with the test detectors and returns what each evaluation did. */
async function evaluate(
  tuning: { checkpointEvery?: number; maxCallsPerTransaction?: number } = {},
) {
  const results: EvaluationResult[] = [];
  const evaluator = testEvaluator(store, {
    detectors: [dropDetector, fullDetector],
    tuning,
    onEvaluated: (r) => results.push(r),
  });
  await evaluator.runOnce();
  await evaluator.stop();
  return results;
}

const tokens = (contextTokens: number) => ({ contextTokens });
const anchor = (conv: string, second: number) =>
  `trace-${conv}:${conv}-${String(second).padStart(6, '0')}`;

describe('incremental evaluation', () => {
  it('creates each finding once and never duplicates it on re-evaluation', async () => {
    await ingest(store.db, [call('a', 1, tokens(10_000)), call('a', 2, tokens(3_000))]);
    const first = await evaluate();
    expect(first).toMatchObject([
      { conversationId: 'a', calls: 2, start: 'beginning', findingsCreated: 1 },
    ]);
    expect(await findingKeys(store.db)).toEqual([`history_lost ${anchor('a', 2)} warning`]);

    // Nothing new: nothing to evaluate.
    expect(await evaluate()).toEqual([]);

    // The same calls re-sent (an exporter retry) re-evaluate from the start: no duplicate, no update.
    const before = await store.db.selectFrom('findings').select(['id', 'updated_at']).execute();
    await ingest(store.db, [call('a', 1, tokens(10_000)), call('a', 2, tokens(3_000))]);
    expect(await evaluate()).toMatchObject([
      { start: 'beginning', calls: 2, findingsCreated: 0, findingsUpdated: 0 },
    ]);
    expect(await store.db.selectFrom('findings').select(['id', 'updated_at']).execute()).toEqual(
      before,
    );

    // A new call is evaluated alone, from the stored state.
    await ingest(store.db, [call('a', 3, tokens(500))]);
    expect(await evaluate()).toMatchObject([
      { start: 'incremental', calls: 1, findingsCreated: 1 },
    ]);
    expect(await findingKeys(store.db)).toEqual([
      `history_lost ${anchor('a', 2)} warning`,
      `history_lost ${anchor('a', 3)} warning`,
    ]);
    const conversation = await store.db
      .selectFrom('conversations')
      .selectAll()
      .executeTakeFirstOrThrow();
    expect(conversation).toMatchObject({
      dirty: false,
      pending_from_ns: null,
      evaluated_span_id: 'a-000003',
    });
  });

  it('re-evaluates when a late call lands between evaluated calls: new findings appear, old ones stay', async () => {
    await ingest(store.db, [call('b', 1, tokens(10_000)), call('b', 3, tokens(3_000))]);
    await evaluate();
    expect(await findingKeys(store.db)).toEqual([`history_lost ${anchor('b', 3)} warning`]);

    // Late: 10,000 -> 2,000 is a drop at 2; 2,000 -> 3,000 at 3 no longer is, but its finding stays.
    await ingest(store.db, [call('b', 2, tokens(2_000))]);
    expect(await evaluate()).toMatchObject([{ start: 'beginning', calls: 3, findingsCreated: 1 }]);
    expect(await findingKeys(store.db)).toEqual([
      `history_lost ${anchor('b', 2)} warning`,
      `history_lost ${anchor('b', 3)} warning`,
    ]);
  });

  it('replays from the latest checkpoint before a late call, with the same result as from the start', async () => {
    const calls = Array.from({ length: 10 }, (_, i) => call('c', i + 1, tokens(10_000)));
    await ingest(store.db, calls);
    expect(await evaluate({ checkpointEvery: 2 })).toMatchObject([
      { calls: 10, findingsCreated: 0 },
    ]);
    const checkpoints = await store.db
      .selectFrom('evaluation_checkpoints')
      .select('at_span_id')
      .execute();
    expect(checkpoints.map((c) => c.at_span_id).sort()).toEqual([
      'c-000002',
      'c-000004',
      'c-000006',
      'c-000008',
      'c-000010',
    ]);

    // A late call at 7.5 s: rewind to the checkpoint at call 6, feed 7, 7.5, 8, 9, 10.
    await ingest(store.db, [call('c', 7.5, { contextTokens: 1_000, spanId: 'c-000007.5' })]);
    expect(await evaluate({ checkpointEvery: 2 })).toMatchObject([
      { start: 'checkpoint', calls: 5, findingsCreated: 1 },
    ]);
    expect(await findingKeys(store.db)).toEqual([`history_lost trace-c:c-000007.5 warning`]);
    const after = await store.db
      .selectFrom('evaluation_checkpoints')
      .select('at_span_id')
      .execute();
    expect(after.map((c) => c.at_span_id).sort()).toEqual([
      'c-000002',
      'c-000004',
      'c-000006',
      'c-000007.5',
      'c-000009',
    ]);

    // The same history evaluated from scratch gives the same findings.
    await store.db.deleteFrom('findings').execute();
    await store.db.deleteFrom('evaluation_checkpoints').execute();
    await store.db
      .updateTable('conversations')
      .set({ evaluated_ns: null, evaluated_span_id: null, state: null, dirty: true })
      .execute();
    expect(await evaluate()).toMatchObject([{ start: 'beginning', calls: 11, findingsCreated: 1 }]);
    expect(await findingKeys(store.db)).toEqual([`history_lost trace-c:c-000007.5 warning`]);
  });

  it('feeds a compaction before the next call, also when the call arrives later', async () => {
    await ingest(store.db, [call('d', 1, tokens(10_000))], [compaction('d', 1.5)]);
    await evaluate();
    await ingest(store.db, [call('d', 2, tokens(1_000))]);
    expect(await evaluate()).toMatchObject([{ start: 'incremental', calls: 1 }]);
    expect(await findingKeys(store.db)).toEqual([]);

    // A compaction between two evaluated calls arriving late never retracts a finding.
    await ingest(store.db, [call('e', 1, tokens(10_000)), call('e', 2, tokens(1_000))]);
    await evaluate();
    await ingest(store.db, [], [compaction('e', 1.5)]);
    expect(await evaluate()).toMatchObject([{ conversationId: 'e', start: 'beginning' }]);
    expect(await findingKeys(store.db)).toEqual([`history_lost ${anchor('e', 2)} warning`]);
  });

  it('splits a long backlog over several transactions, each short', async () => {
    const calls = Array.from({ length: 10 }, (_, i) =>
      call('f', i + 1, tokens(i === 6 ? 100 : 10_000)),
    );
    await ingest(store.db, calls);
    const results = await evaluate({ maxCallsPerTransaction: 3 });
    expect(results.map((r) => [r.calls, r.settled])).toEqual([
      [3, false],
      [3, false],
      [3, false],
      [1, true],
    ]);
    expect(await findingKeys(store.db)).toEqual([`history_lost ${anchor('f', 7)} warning`]);
    const conversation = await store.db
      .selectFrom('conversations')
      .selectAll()
      .executeTakeFirstOrThrow();
    expect(conversation).toMatchObject({ dirty: false, evaluated_span_id: 'f-000010' });
  });

  it('evaluates several conversations in one transaction, sharing its call budget', async () => {
    await ingest(
      store.db,
      [1, 2, 3].map((i) => call('ba', i, tokens(10_000))),
    );
    await ingest(
      store.db,
      [1, 2, 3].map((i) => call('bb', i, tokens(i === 3 ? 100 : 10_000))),
    );
    const results = await evaluate({ maxCallsPerTransaction: 4 });
    // ba (3 calls) and the first call of bb share one transaction; bb's rest comes next.
    expect(results.map((r) => [r.conversationId, r.calls, r.settled])).toEqual([
      ['ba', 3, true],
      ['bb', 1, false],
      ['bb', 2, true],
    ]);
    expect(await findingKeys(store.db)).toEqual([`history_lost ${anchor('bb', 3)} warning`]);
    const rows = await store.db.selectFrom('conversations').select(['id', 'dirty']).execute();
    expect(rows.every((row) => !row.dirty)).toBe(true);
  });

  it('waits for the quiet period before evaluating', async () => {
    await ingest(store.db, [call('g', 1, tokens(10_000)), call('g', 2, tokens(1_000))]);
    const evaluator = testEvaluator(store, {
      detectors: [dropDetector],
      config: { evaluatorQuietMs: 60_000, evaluatorPollMs: 3_600_000 },
    });
    expect(await evaluator.runOnce()).toBe(0);
    await evaluator.stop();
    expect(await findingKeys(store.db)).toEqual([]);
  });

  it('evaluates a conversation that never goes quiet once it has waited maxWaitMs', async () => {
    // minutes, moved on by the clock: the real time the test takes does not count
    const clock = new TestClock();
    await ingest(store.db, [call('s', 1, tokens(10_000))]);
    const evaluator = testEvaluator(store, {
      detectors: [dropDetector],
      config: { evaluatorQuietMs: 600_000, evaluatorPollMs: 3_600_000 },
      maxWaitMs: 300_000,
      clock,
    });
    expect(await evaluator.runOnce()).toBe(0);
    clock.advance(200_000);
    // Still streaming: a new call keeps last_ingest_at fresh, but dirty_since stays.
    await ingest(store.db, [call('s', 2, tokens(1_000))]);
    expect(await evaluator.runOnce()).toBe(0);
    clock.advance(100_001);
    expect(await evaluator.runOnce()).toBe(1);
    await evaluator.stop();
    expect(await findingKeys(store.db)).toEqual([`history_lost ${anchor('s', 2)} warning`]);
    const row = await store.db.selectFrom('conversations').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({ dirty: false, dirty_since: null });
  });

  it('puts a conversation whose evaluation fails in backoff and goes on with the others', async () => {
    await ingest(store.db, [call('hbad', 1)]);
    await ingest(store.db, [call('h', 1, tokens(10_000)), call('h', 2, tokens(1_000))]);
    const errors: unknown[] = [];
    const faulty: Detector<{ prev: number | null }> = {
      ...dropDetector,
      step(state, item, context) {
        if (item.type === 'call' && item.call.conversationId === 'hbad') {
          throw new Error('detector bug');
        }
        return dropDetector.step(state, item, context);
      },
    };
    const evaluator = testEvaluator(store, {
      detectors: [faulty as Detector],
      log: { info() {}, warn() {}, error: (obj) => errors.push(obj) },
    });
    expect(await evaluator.runOnce()).toBe(1);
    expect(await evaluator.runOnce()).toBe(0);
    await evaluator.stop();
    expect(errors).toHaveLength(1);
    const bad = await store.db
      .selectFrom('conversations')
      .selectAll()
      .where('id', '=', 'hbad')
      .executeTakeFirstOrThrow();
    expect(bad).toMatchObject({ dirty: true, eval_failures: 1, eval_error: 'detector bug' });
    expect(bad.eval_retry_at).toBeInstanceOf(Date);
    expect(await findingKeys(store.db)).toEqual([`history_lost ${anchor('h', 2)} warning`]);
  });

  it('lays a batch write of findings the database refuses at the conversation that caused it', async () => {
    // three conversations settle in one batch; one's finding carries a NUL the database refuses
    await ingest(store.db, [call('na', 1, tokens(10_000)), call('na', 2, tokens(1_000))]);
    await ingest(store.db, [call('nbad', 1, tokens(10_000)), call('nbad', 2, tokens(1_000))]);
    await ingest(store.db, [call('nc', 1, tokens(10_000)), call('nc', 2, tokens(1_000))]);
    const unstorable: Detector<{ prev: number | null }> = {
      ...dropDetector,
      step(state, item, context) {
        const out = dropDetector.step(state, item, context);
        if (item.type !== 'call' || item.call.conversationId !== 'nbad') return out;
        return {
          ...out,
          findings: out.findings.map((f) => ({ ...f, summary: `${f.summary}\u0000` })),
        };
      },
    };
    const errors: unknown[] = [];
    const results: EvaluationResult[] = [];
    const evaluator = testEvaluator(store, {
      detectors: [unstorable as Detector],
      log: { info() {}, warn() {}, error: (obj, msg) => errors.push({ msg, ...obj }) },
      onEvaluated: (r) => results.push(r),
    });
    await evaluator.runOnce();
    await evaluator.stop();
    // once: its lock is held until its failure is recorded, so no other worker judges it again
    expect(errors).toEqual([
      expect.objectContaining({
        msg: 'conversation evaluation failed',
        conversationId: 'nbad',
        failures: 1,
      }),
    ]);
    const bad = await store.db
      .selectFrom('conversations')
      .select(['dirty', 'eval_failures'])
      .where('id', '=', 'nbad')
      .executeTakeFirstOrThrow();
    expect(bad).toEqual({ dirty: true, eval_failures: 1 });
    expect(await findingKeys(store.db)).toEqual([
      `history_lost ${anchor('na', 2)} warning`,
      `history_lost ${anchor('nc', 2)} warning`,
    ]);
    // each finding counted once, on its own conversation, though the first batch write rolled back
    expect(
      results.map((r) => [r.conversationId, r.findingsCreated, r.findingEvents.length]).sort(),
    ).toEqual([
      ['na', 1, 1],
      ['nc', 1, 1],
    ]);
  });

  it('starts from its own copy of the state while the row holds its token, else from the row', async () => {
    // a stored state that, if read, would see a drop from 999,999 tokens on the next call
    const plant = () =>
      store.db
        .updateTable('conversations')
        .set({
          state: JSON.stringify({
            v: 1,
            sinceCheckpoint: 1,
            detectors: { history_lost: { prev: 999_999 } },
          }),
        })
        .where('id', '=', 'k')
        .execute();
    const evaluator = testEvaluator(store, { detectors: [dropDetector] });
    await ingest(store.db, [call('k', 1, tokens(10_000))]);
    expect(await evaluator.runOnce()).toBe(1);
    await plant(); // the token stays the one this evaluator stored
    await ingest(store.db, [call('k', 2, tokens(9_500))]);
    expect(await evaluator.runOnce()).toBe(1);
    await evaluator.stop();
    // judged from its copy (10,000 -> 9,500): nothing lost
    expect(await findingKeys(store.db)).toEqual([]);

    // another process holds no copy: it reads the row
    await plant();
    await ingest(store.db, [call('k', 3, tokens(9_000))]);
    const other = testEvaluator(store, { detectors: [dropDetector] });
    expect(await other.runOnce()).toBe(1);
    await other.stop();
    expect(await findingKeys(store.db)).toEqual([`history_lost ${anchor('k', 3)} warning`]);
  });

  it('reads the row when an earlier version stored a position and state without a token', async () => {
    const evaluator = testEvaluator(store, { detectors: [dropDetector] });
    await ingest(store.db, [call('u', 1, tokens(10_000))]);
    expect(await evaluator.runOnce()).toBe(1);
    // a process of a version before 0170, during an upgrade, evaluates call 2 (a 999,999-token
    // context): it stores its position and state and leaves the token as it was
    await ingest(store.db, [call('u', 2, tokens(999_999))]);
    const two = call('u', 2);
    await store.db
      .updateTable('conversations')
      .set({
        evaluated_ns: two.startNs,
        evaluated_span_id: two.spanId,
        state: JSON.stringify({
          v: 1,
          sinceCheckpoint: 2,
          detectors: { history_lost: { prev: 999_999 } },
        }),
        dirty: false,
        pending_from_ns: null,
      })
      .where('id', '=', 'u')
      .execute();
    // this evaluator's copy is of the position before: it reads the row, and sees the drop
    await ingest(store.db, [call('u', 3, tokens(9_000))]);
    expect(await evaluator.runOnce()).toBe(1);
    await evaluator.stop();
    expect((await findingKeys(store.db)).filter((key) => key.includes('u-'))).toEqual([
      `history_lost ${anchor('u', 3)} warning`,
    ]);
  });

  it('replays from the beginning after a failure, not trusting the stored state', async () => {
    const strict: Detector<{ prev: number | null }> = {
      ...dropDetector,
      step(state, item, context) {
        if (typeof state.prev !== 'number' && state.prev !== null) throw new Error('bad state');
        return dropDetector.step(state, item, context);
      },
    };
    const evaluator = testEvaluator(store, { detectors: [strict as Detector] });
    await ingest(store.db, [call('j', 1, tokens(10_000))]);
    expect(await evaluator.runOnce()).toBe(1);
    // A state this detector cannot read (as after a change of its state format).
    await store.db
      .updateTable('conversations')
      .set({
        state: JSON.stringify({
          v: 1,
          sinceCheckpoint: 1,
          detectors: { history_lost: { prev: 'x' } },
        }),
        // whatever writes a state drops the token, so no evaluator trusts its copy (0170)
        state_token: null,
      })
      .execute();
    await ingest(store.db, [call('j', 2, tokens(1_000))]);
    expect(await evaluator.runOnce()).toBe(0);
    await store.db.updateTable('conversations').set({ eval_retry_at: null }).execute();
    expect(await evaluator.runOnce()).toBe(1);
    await evaluator.stop();
    expect(await findingKeys(store.db)).toEqual([`history_lost ${anchor('j', 2)} warning`]);
    const row = await store.db.selectFrom('conversations').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({ dirty: false, eval_failures: 0, eval_error: null });
  });

  it('stop() is safe twice and runOnce after stop evaluates nothing', async () => {
    const evaluator = testEvaluator(store, { detectors: [dropDetector] });
    await evaluator.stop();
    await evaluator.stop();
    await ingest(store.db, [call('i', 1)]);
    expect(await evaluator.runOnce()).toBe(0);
  });
});
