/**
 * A cursor-paginated API list (`{ items, next }`, `?cursor=`): the first page loads when the
 * path changes, `loadMore` appends the next one. Every list page uses it, with
 * `components/LoadMore.tsx` for its button.
 */
import { useCallback, useEffect, useState } from 'react';
import { api } from './api.ts';
import { queryString } from './router.ts';

export interface Page<T> {
  items: T[];
  next: string | null;
}

export interface Paged<T> {
  items: T[];
  /** True while there is a next page to load. */
  more: boolean;
  loading: boolean;
  error: Error | undefined;
  loadMore: () => void;
  reload: () => void;
}

/** `path` is the list's URL with its filters, without `cursor`; undefined loads nothing. */
export function usePaged<T>(path: string | undefined): Paged<T> {
  const [state, setState] = useState<{
    items: T[];
    next: string | null;
    loading: boolean;
    error?: Error;
  }>({ items: [], next: null, loading: path !== undefined });
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    if (path === undefined) return;
    let current = true;
    setState({ items: [], next: null, loading: true });
    api<Page<T>>(path).then(
      (page) => current && setState({ items: page.items, next: page.next, loading: false }),
      (error: Error) => current && setState({ items: [], next: null, loading: false, error }),
    );
    return () => {
      current = false;
    };
  }, [path, generation]);

  const loadMore = useCallback(() => {
    if (path === undefined || state.next === null || state.loading) return;
    const cursor = state.next;
    setState((previous) => ({ ...previous, loading: true }));
    const separator = path.includes('?') ? '&' : '?';
    api<Page<T>>(`${path}${separator}cursor=${encodeURIComponent(cursor)}`).then(
      (page) =>
        setState((previous) => ({
          items: [...previous.items, ...page.items],
          next: page.next,
          loading: false,
        })),
      (error: Error) => setState((previous) => ({ ...previous, loading: false, error })),
    );
  }, [path, state.next, state.loading]);

  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  return {
    items: state.items,
    more: state.next !== null,
    loading: state.loading,
    error: state.error,
    loadMore,
    reload,
  };
}

/** `/api/x?a=1&b=2` from the parameters that are set. */
export function withQuery(path: string, query: Record<string, string | undefined>): string {
  const search = queryString(query);
  return search ? `${path}?${search}` : path;
}
