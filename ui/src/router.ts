/**
 * Hash routing: `#/findings/<id>?detector=x` → { path: ['findings', '<id>'], query }. Hash
 * routes need no server fallback, and `<publicUrl>/#/findings/<id>` (the link every channel
 * sends) reaches the console's index.html as is.
 */
import { useEffect, useState } from 'react';

export interface Route {
  path: string[];
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [pathPart = '', queryPart = ''] = raw.split('?', 2);
  const path = pathPart
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => decodeURIComponent(segment));
  return { path, query: new URLSearchParams(queryPart) };
}

/** `a=1&b=2` from the parameters that are set (undefined and empty values left out). */
export function queryString(query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query))
    if (value !== undefined && value !== '') params.set(key, value);
  return params.toString();
}

/** The hash for a path and query: `href(['runs', id], { finding: f })` → `#/runs/<id>?finding=f`. */
export function href(path: string[], query?: Record<string, string | undefined>): string {
  const search = queryString(query ?? {});
  return `#/${path.map(encodeURIComponent).join('/')}${search ? `?${search}` : ''}`;
}

export function navigate(path: string[], query?: Record<string, string | undefined>): void {
  window.location.hash = href(path, query);
}

/** Replaces the current entry (a redirect), so Back does not bounce through it. */
export function redirect(path: string[], query?: Record<string, string | undefined>): void {
  window.location.replace(href(path, query));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseHash(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
