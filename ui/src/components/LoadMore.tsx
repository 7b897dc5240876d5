/** The "older items" button under a cursor-paginated list ({@link usePaged}). */
import type { Paged } from '../paging.ts';

export function LoadMore({ list, label }: { list: Paged<unknown>; label: string }) {
  if (!list.more) return null;
  return (
    <button
      type="button"
      className="secondary more"
      disabled={list.loading}
      onClick={list.loadMore}
    >
      {list.loading ? 'Loading…' : label}
    </button>
  );
}
