/**
 * Conversations of producers that split a call's evidence between spans and logs (Claude
 * Code) wait their own settle time before evaluation; others only the default quiet time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  claimSettledConversations,
  markConversationsDirty,
} from '../../src/store/conversations.ts';
import { TestClock } from '../helpers/clock.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

let store: TestStore;
beforeAll(async () => {
  store = await createTestStore();
});
afterAll(async () => {
  await store?.close();
});

const claim = (clock: TestClock) =>
  store.db
    .transaction()
    .execute(
      async (trx) =>
        (await claimSettledConversations(trx, { quietMs: 0, maxWaitMs: 0, limit: 1, clock }))[0],
    );

/** Ten minutes: far longer than the real time a test takes, however busy the machine. */
const SETTLE_MS = 600_000;

describe('settle time', () => {
  it('holds a conversation with a settle time until it has been quiet that long', async () => {
    const clock = new TestClock();
    await markConversationsDirty(store.db, 'default', [
      { conversationId: 'cc-session', fromNs: '1', calls: 1, settleMs: SETTLE_MS },
      { conversationId: 'plain', fromNs: '1', calls: 1 },
    ]);
    clock.advance(1);
    expect((await claim(clock))?.conversationId).toBe('plain');
    await store.db
      .updateTable('conversations')
      .set({ dirty: false })
      .where('id', '=', 'plain')
      .execute();
    expect(await claim(clock)).toBeUndefined();
    clock.advance(SETTLE_MS - 60_000);
    expect(await claim(clock)).toBeUndefined();
    clock.advance(60_000);
    expect((await claim(clock))?.conversationId).toBe('cc-session');
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
