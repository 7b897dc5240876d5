/**
 * An evaluator's batches grow under a backlog (issue 39): after a claim that came back full a
 * worker asks for twice as many, up to `maxBatchSize`, and after a short one for `batchSize`
 * again; every conversation is evaluated once either way, with the findings a batch of one
 * makes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore, type TestStore } from '../../helpers/store.ts';
import { call, dropDetector, findingKeys, ingest, testEvaluator } from './helpers.ts';

let store: TestStore;
beforeAll(async () => {
  store = await createTestStore();
});
afterAll(async () => {
  await store?.close();
});

/** 40 conversations, each with a drop of context (one finding each). */
const ingestBacklog = async (prefix: string) => {
  for (let i = 0; i < 40; i++)
    await ingest(store.db, [
      call(`${prefix}${i}`, 1, { contextTokens: 90_000 }),
      call(`${prefix}${i}`, 2, { contextTokens: 10_000 }),
    ]);
};

describe('evaluator batches under a backlog', () => {
  it('double after a full claim up to maxBatchSize, and start again from batchSize', async () => {
    await ingestBacklog('grow-');
    const batches: Array<{ limit: number; claimed: number }> = [];
    const evaluator = testEvaluator(store, {
      detectors: [dropDetector],
      batchSize: 4,
      maxBatchSize: 16,
      concurrency: 1,
      onBatch: (batch) => batches.push(batch),
    });
    try {
      expect(await evaluator.runOnce()).toBe(40);
      // 4 + 8 + 16 full, then the 12 left in a claim of 16
      expect(batches).toEqual([
        { limit: 4, claimed: 4 },
        { limit: 8, claimed: 8 },
        { limit: 16, claimed: 16 },
        { limit: 16, claimed: 12 },
      ]);
      await ingestBacklog('again-');
      batches.length = 0;
      expect(await evaluator.runOnce()).toBe(40);
      expect(batches[0]).toEqual({ limit: 4, claimed: 4 });
    } finally {
      await evaluator.stop();
    }
    const keys = await findingKeys(store.db);
    expect(keys.filter((key) => key.includes('grow-') || key.includes('again-'))).toHaveLength(80);
  });
});
