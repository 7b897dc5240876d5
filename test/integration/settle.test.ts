/**
 * Conversations of producers that split a call's evidence between spans and logs (Claude
 * Code) wait their own settle time before evaluation; others only the default quiet time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  claimSettledConversations,
  markConversationsDirty,
} from '../../src/store/conversations.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

let store: TestStore;
beforeAll(async () => {
  store = await createTestStore();
});
afterAll(async () => {
  await store?.close();
});

const claim = () =>
  store.db
    .transaction()
    .execute(
      async (trx) =>
        (await claimSettledConversations(trx, { quietMs: 0, maxWaitMs: 0, limit: 1 }))[0],
    );

describe('settle time', () => {
  it('holds a conversation with a settle time until it has been quiet that long', async () => {
    await markConversationsDirty(store.db, 'default', [
      { conversationId: 'cc-session', fromNs: '1', calls: 1, settleMs: 1_500 },
      { conversationId: 'plain', fromNs: '1', calls: 1 },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await claim())?.conversationId).toBe('plain');
    await store.db
      .updateTable('conversations')
      .set({ dirty: false })
      .where('id', '=', 'plain')
      .execute();
    expect(await claim()).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    expect((await claim())?.conversationId).toBe('cc-session');
  });

  it('keeps the longest settle time a conversation was given', async () => {
    await markConversationsDirty(store.db, 'default', [
      { conversationId: 'mixed', fromNs: '1', calls: 1, settleMs: 5_000 },
    ]);
    await markConversationsDirty(store.db, 'default', [
      { conversationId: 'mixed', fromNs: '2', calls: 1 },
    ]);
    const row = await store.db
      .selectFrom('conversations')
      .select('settle_ms')
      .where('id', '=', 'mixed')
      .executeTakeFirstOrThrow();
    expect(row.settle_ms).toBe(5_000);
  });
});
