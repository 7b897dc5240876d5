/**
 * An evaluator's batches grow under a backlog (issue 39): after a claim that came back full the
 * next asks for twice as many, up to `maxBatchSize`, and after a short (or empty) one for half
 * as many, down to `batchSize`, from one run to the next; every conversation is evaluated once
 * either way, with the findings a batch of one makes.
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

/** `n` conversations, each with a drop of context (one finding each). */
const ingestBacklog = async (prefix: string, n: number) => {
  for (let i = 0; i < n; i++)
    await ingest(store.db, [
      call(`${prefix}${i}`, 1, { contextTokens: 90_000 }),
      call(`${prefix}${i}`, 2, { contextTokens: 10_000 }),
    ]);
};

describe('evaluator batches under a backlog', () => {
  it('double after a full claim up to maxBatchSize, and halve after a short one', async () => {
    const batches: Array<{ limit: number; claimed: number }> = [];
    const evaluator = testEvaluator(store, {
      detectors: [dropDetector],
      batchSize: 4,
      maxBatchSize: 16,
      concurrency: 1,
      onBatch: (batch) => batches.push(batch),
    });
    const run = async (prefix: string, n: number) => {
      await ingestBacklog(prefix, n);
      batches.length = 0;
      expect(await evaluator.runOnce()).toBe(n);
      return [...batches];
    };
    try {
      // 4 + 8 + 16 full, then the 12 left in a claim of 16 (short: the next asks for 8)
      expect(await run('grow-', 40)).toEqual([
        { limit: 4, claimed: 4 },
        { limit: 8, claimed: 8 },
        { limit: 16, claimed: 16 },
        { limit: 16, claimed: 12 },
      ]);
      // from 8, up again; the empty claim that ends the run halves it to 8
      expect(await run('again-', 40)).toEqual([
        { limit: 8, claimed: 8 },
        { limit: 16, claimed: 16 },
        { limit: 16, claimed: 16 },
      ]);
      // a quiet stream: down to batchSize, never below
      expect(await run('quiet-', 3)).toEqual([{ limit: 8, claimed: 3 }]);
      expect(await run('still-', 1)).toEqual([{ limit: 4, claimed: 1 }]);
      expect(await run('calm-', 1)).toEqual([{ limit: 4, claimed: 1 }]);
    } finally {
      await evaluator.stop();
    }
    const keys = await findingKeys(store.db);
    expect(keys).toHaveLength(85);
  });
});
