/**
 * Late findings (issue 34 §1): a finding an evaluation creates while judging again calls an
 * earlier evaluation had judged (a call that arrived between them, a window override saved since)
 * is stored with `late`; one found on calls judged for the first time is not. The furthest call
 * ever judged (`conversations.judged_ns`) decides, so a rewind split over several transactions
 * still marks what it judges again, and a new call after it does not.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EvaluationResult } from '../../../src/evaluator/evaluate.ts';
import { DEFAULT_THRESHOLDS } from '../../../src/model/thresholds.ts';
import { getAlertSettings, putAlertSettings } from '../../../src/store/alerts.ts';
import { markModelCallsDirty, storedCallModels } from '../../../src/store/conversations.ts';
import { createTestStore, type TestStore } from '../../helpers/store.ts';
import { call, dropDetector, fullDetector, ingest, testEvaluator } from './helpers.ts';

let store: TestStore;
beforeAll(async () => {
  store = await createTestStore();
});
afterAll(async () => {
  await store?.close();
});
beforeEach(async () => {
  await store.db.deleteFrom('deliveries').execute();
  await store.db.deleteFrom('findings').execute();
  await store.db.deleteFrom('evaluation_checkpoints').execute();
  await store.db.deleteFrom('conversations').execute();
  await store.db.deleteFrom('llm_calls').execute();
  await putAlertSettings(store.db, 'default', {
    enabled: true,
    thresholds: { ...DEFAULT_THRESHOLDS },
    windowOverrides: [],
  });
});

async function evaluate(tuning: { maxCallsPerTransaction?: number } = {}) {
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

/** Every finding as `detector spanId late`, sorted. */
async function findings(): Promise<string[]> {
  const rows = await store.db
    .selectFrom('findings')
    .select(['detector', 'span_id', 'late'])
    .execute();
  return rows.map((r) => `${r.detector} ${r.span_id} ${r.late ? 'late' : 'on time'}`).sort();
}

const tokens = (contextTokens: number) => ({ contextTokens });

describe('late findings', () => {
  it('a finding of a first evaluation is not late', async () => {
    await ingest(store.db, [call('a', 1, tokens(150_000)), call('a', 2, tokens(3_000))]);
    expect(await evaluate()).toMatchObject([
      { start: 'beginning', findingsCreated: 2, findingsLate: 0 },
    ]);
    expect(await findings()).toEqual([
      'context_too_full a-000001 on time',
      'history_lost a-000002 on time',
    ]);
  });

  it('a late call between evaluated calls raises a late finding; a new call after them does not', async () => {
    await ingest(store.db, [call('b', 1, tokens(10_000)), call('b', 3, tokens(9_000))]);
    await evaluate();
    expect(await findings()).toEqual([]);

    // call 2 drops from call 1 (judged again: late); call 4 drops from call 3 (new: on time)
    await ingest(store.db, [call('b', 2, tokens(3_000)), call('b', 4, tokens(500))]);
    expect(await evaluate()).toMatchObject([{ findingsCreated: 2, findingsLate: 1 }]);
    expect(await findings()).toEqual([
      'history_lost b-000002 late',
      'history_lost b-000004 on time',
    ]);
  });

  it('an override saved later re-judges the stored calls over several transactions, all late', async () => {
    const model = { requestModel: 'quill-nine', responseModel: 'quill-nine' };
    const unknown = { contextWindow: null, windowSource: null };
    await ingest(
      store.db,
      [1, 2, 3, 4, 5].map((s) => call('c', s, { ...model, ...unknown, contextTokens: 150_000 })),
    );
    await evaluate();
    expect(await findings()).toEqual([]);

    const settings = await getAlertSettings(store.db, 'default');
    await putAlertSettings(store.db, 'default', {
      ...settings,
      windowOverrides: [{ model: 'quill-*', window: 200_000 }],
    });
    expect(await storedCallModels(store.db, 'default')).toEqual(['quill-nine']);
    expect(await markModelCallsDirty(store.db, 'default', ['quill-nine', 'other-model'])).toBe(1);
    const results = await evaluate({ maxCallsPerTransaction: 2 });
    expect(results.map((r) => [r.calls, r.findingsLate])).toEqual([
      [2, 2],
      [2, 2],
      [1, 1],
    ]);
    // a call after every judged one: on time
    await ingest(store.db, [call('c', 6, { ...model, ...unknown, contextTokens: 160_000 })]);
    await evaluate();
    expect(await findings()).toEqual([
      'context_too_full c-000001 late',
      'context_too_full c-000002 late',
      'context_too_full c-000003 late',
      'context_too_full c-000004 late',
      'context_too_full c-000005 late',
      'context_too_full c-000006 on time',
    ]);
    const row = await store.db
      .selectFrom('conversations')
      .select(['judged_ns', 'evaluated_ns'])
      .where('id', '=', 'c')
      .executeTakeFirstOrThrow();
    expect(row.judged_ns).toBe(row.evaluated_ns);
  });
});
