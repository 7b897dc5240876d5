/**
 * The evaluator's batch read (`prefetchTimelinePages` + `pageOfPrefetched`) gives the very
 * page `loadTimelinePage` gives, for every conversation of the batch, from the start and
 * after a position, with compactions cut at the page's last call; and both give the same
 * pages within the range of call starts the conversation's row records (migration 0190).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  loadTimelinePage,
  pageOfPrefetched,
  prefetchTimelinePages,
  type TimelinePosition,
} from '../../../src/store/timeline.ts';
import { createTestStore, type TestStore } from '../../helpers/store.ts';
import { call, compaction, ingest } from './helpers.ts';

let store: TestStore;
beforeAll(async () => {
  store = await createTestStore();
  // p: 6 calls with compactions between them and after the last; q: 2 calls; r: none.
  await ingest(
    store.db,
    [1, 2, 3, 4, 5, 6].map((s) => call('p', s)),
    [compaction('p', 2.5), compaction('p', 4), compaction('p', 9)],
  );
  await ingest(store.db, [call('q', 1), call('q', 2)], [compaction('q', 0.5)]);
});
afterAll(async () => {
  await store?.close();
});

const at = (conv: string, second: number): TimelinePosition => {
  const c = call(conv, second);
  return { ns: c.startNs, spanId: c.spanId };
};

describe('prefetched timeline pages', () => {
  it('equal loadTimelinePage for each conversation, position and page size', async () => {
    const wanted = [
      { workspaceId: 'default', conversationId: 'p', after: null },
      { workspaceId: 'default', conversationId: 'p', after: at('p', 2) },
      { workspaceId: 'default', conversationId: 'q', after: null },
      { workspaceId: 'default', conversationId: 'q', after: at('q', 2) },
      { workspaceId: 'default', conversationId: 'r', after: null },
    ];
    const prefetchLimit = 5;
    const pages = await prefetchTimelinePages(store.db, wanted, prefetchLimit);
    expect(pages.map((page) => page.calls.length)).toEqual([5, 4, 2, 0, 0]);
    for (const [i, w] of wanted.entries()) {
      for (const limit of [1, 2, 3, 5]) {
        const expected = await loadTimelinePage(store.db, w, w.after, limit);
        expect(pageOfPrefetched(pages[i]!, limit), `${i} ${limit}`).toEqual(expected);
      }
    }
    // Within each conversation's range of call starts (as its row records it): the same pages.
    const ranges = await store.db
      .selectFrom('conversations')
      .select(['id', 'calls_from_ns', 'calls_to_ns'])
      .execute();
    const within = (id: string) => {
      const row = ranges.find((r) => r.id === id);
      return row?.calls_from_ns && row.calls_to_ns
        ? { fromNs: row.calls_from_ns, toNs: row.calls_to_ns }
        : null;
    };
    expect(within('p')).toEqual({ fromNs: call('p', 1).startNs, toNs: call('p', 6).startNs });
    const bounded = wanted.map((w) => ({ ...w, within: within(w.conversationId) }));
    expect(await prefetchTimelinePages(store.db, bounded, prefetchLimit)).toEqual(pages);
    for (const w of bounded)
      for (const limit of [1, 2, 5])
        expect(await loadTimelinePage(store.db, w, w.after, limit, w.within)).toEqual(
          await loadTimelinePage(store.db, w, w.after, limit),
        );
    // A range that holds none of the calls reads none: the bound is applied.
    const before = { fromNs: '0', toNs: String(BigInt(call('p', 1).startNs) - 1n) };
    const [none] = await prefetchTimelinePages(store.db, [{ ...wanted[0]!, within: before }], 5);
    expect(none!.calls).toEqual([]);
    expect((await loadTimelinePage(store.db, wanted[0]!, null, 5, before)).calls).toEqual([]);
    // A page bigger than the prefetch cannot be told from it.
    expect(pageOfPrefetched(pages[0]!, 6)).toBeUndefined();
    expect(pageOfPrefetched(pages[2]!, 6)).toEqual(
      await loadTimelinePage(store.db, wanted[2]!, null, 6),
    );
  });
});
