/**
 * The range of a conversation's call starts (migration 0190, issue 39): ingest records on the
 * conversation's row the earliest and latest start of its calls, and the evaluator reads its
 * calls within that range (only the daily partitions it covers). A range too narrow would hide
 * calls from the detectors, so: marks widen it (a late call lowers it), a mark of calls whose
 * starts it does not give makes it unknown for good (unbounded reads), so does a write of an
 * earlier version during an upgrade (it moves `last_ingest_at` without the range), a row with
 * no call has an empty one, and the receiver records what it stores.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimConversations, noteConversations } from '../../../src/store/conversations.ts';
import { ensureWorkspace } from '../../../src/store/workspaces.ts';
import { hex, jsonRequest, jsonSpan } from '../../helpers/otlp-bodies.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { createTestStore, type TestStore } from '../../helpers/store.ts';

let store: TestStore;
beforeAll(async () => {
  store = await createTestStore();
  await ensureWorkspace(store.db, 'w');
});
afterAll(async () => {
  await store?.close();
});

async function range(id: string, workspaceId = 'w') {
  const row = await store.db
    .selectFrom('conversations')
    .select(['calls_from_ns', 'calls_to_ns'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return [row.calls_from_ns, row.calls_to_ns];
}

const starts = (fromNs: string, toNs: string) => ({ fromNs, toNs });

describe("a conversation's range of call starts", () => {
  it('widens with every mark of calls, a late one included, in one batch or across batches', async () => {
    await noteConversations(store.db, 'w', [
      { conversationId: 'a', fromNs: '500', calls: 1, callStarts: starts('500', '500') },
      { conversationId: 'a', fromNs: '700', calls: 1, callStarts: starts('700', '700') },
    ]);
    expect(await range('a')).toEqual(['500', '700']);
    // a compaction (no call) leaves it; a late call and a later one widen it
    await noteConversations(store.db, 'w', [{ conversationId: 'a', fromNs: '100', calls: 0 }]);
    expect(await range('a')).toEqual(['500', '700']);
    await noteConversations(store.db, 'w', [
      { conversationId: 'a', fromNs: '300', calls: 1, callStarts: starts('300', '300') },
    ]);
    await noteConversations(store.db, 'w', [
      { conversationId: 'a', fromNs: '900', calls: 0, callStarts: starts('900', '900') },
    ]);
    expect(await range('a')).toEqual(['300', '900']);
  });

  it('is empty on a row with no call, and holds the first call when it comes', async () => {
    await noteConversations(store.db, 'w', [], [{ conversationId: 'b', project: '/r', atNs: '1' }]);
    await noteConversations(store.db, 'w', [{ conversationId: 'c', fromNs: '50', calls: 0 }]);
    for (const id of ['b', 'c']) {
      const [from, to] = await range(id);
      expect(BigInt(from!) > BigInt(to!), id).toBe(true);
    }
    await noteConversations(store.db, 'w', [
      { conversationId: 'b', fromNs: '40', calls: 2, callStarts: starts('40', '60') },
    ]);
    expect(await range('b')).toEqual(['40', '60']);
  });

  it('becomes unknown, and stays so, once calls come without their starts', async () => {
    await noteConversations(store.db, 'w', [
      { conversationId: 'd', fromNs: '10', calls: 1, callStarts: starts('10', '10') },
      { conversationId: 'e', fromNs: '10', calls: 3 },
    ]);
    expect(await range('e')).toEqual([null, null]);
    await noteConversations(store.db, 'w', [{ conversationId: 'd', fromNs: '20', calls: 1 }]);
    await noteConversations(store.db, 'w', [
      { conversationId: 'd', fromNs: '30', calls: 1, callStarts: starts('30', '30') },
      { conversationId: 'e', fromNs: '30', calls: 1, callStarts: starts('30', '30') },
    ]);
    expect(await range('d')).toEqual([null, null]);
    expect(await range('e')).toEqual([null, null]);
  });
});

describe('an earlier version writing during an upgrade', () => {
  const claimed = (id: string) =>
    store.db.transaction().execute(async (trx) => (await claimConversations(trx, 'w', [id]))[0]);

  it('makes the range unknown to the claim, and at the next mark for good', async () => {
    await noteConversations(store.db, 'w', [
      { conversationId: 'kept', fromNs: '10', calls: 1, callStarts: starts('10', '20') },
      { conversationId: 'old', fromNs: '10', calls: 1, callStarts: starts('10', '20') },
    ]);
    expect((await claimed('kept'))?.callStarts).toEqual(starts('10', '20'));
    // what the upsert of a version before migration 0190 does when it marks a call at 99
    await store.db
      .updateTable('conversations')
      .set({ dirty: true, last_ingest_at: sql<Date>`clock_timestamp()` })
      .where('id', '=', 'old')
      .execute();
    expect((await claimed('old'))?.callStarts).toBeNull();
    await noteConversations(store.db, 'w', [
      { conversationId: 'old', fromNs: '30', calls: 1, callStarts: starts('30', '30') },
      { conversationId: 'kept', fromNs: '30', calls: 1, callStarts: starts('30', '30') },
    ]);
    expect(await range('old')).toEqual([null, null]);
    expect((await claimed('old'))?.callStarts).toBeNull();
    expect((await claimed('kept'))?.callStarts).toEqual(starts('10', '30'));
  });
});

describe('the receiver', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ store });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("records the earliest and latest start of the calls it stores, a late batch's too", async () => {
    const base = BigInt(Date.now()) * 1_000_000n;
    const chat = (i: number) =>
      jsonSpan({
        traceId: hex(16),
        startNs: base + BigInt(i) * 1_000_000_000n,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.conversation.id': 'recv',
          'gen_ai.usage.input_tokens': 1_000 + i,
          'gen_ai.usage.output_tokens': 50,
        },
      });
    const post = async (spans: unknown[]) => {
      const response = await fetch(`${server.url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(jsonRequest(spans)),
      });
      expect(response.status).toBe(200);
    };
    await post([chat(3), chat(5), chat(4)]);
    expect(await range('recv', 'default')).toEqual([
      String(base + 3_000_000_000n),
      String(base + 5_000_000_000n),
    ]);
    await post([chat(1)]);
    expect(await range('recv', 'default')).toEqual([
      String(base + 1_000_000_000n),
      String(base + 5_000_000_000n),
    ]);
  });
});
