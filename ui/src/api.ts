/**
 * The console's client for the JSON API on the same origin. The session cookie (HttpOnly)
 * travels by itself; every state-changing request carries the CSRF token `GET /api/session`
 * handed out. Errors come back as {@link ApiError} with the API's own message.
 */
import { useCallback, useEffect, useState } from 'react';

export type Scope = 'read' | 'ingest' | 'admin';

export interface Session {
  open: boolean;
  authenticated: boolean;
  scope: Scope | null;
  workspaceId: string | null;
  csrfToken: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

let csrfToken = '';
/** Called when an API answer says the session ended (401): the app shows sign-in. */
let onSignedOut: () => void = () => {};

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

export function onSessionEnded(handler: () => void): void {
  onSignedOut = handler;
}

export async function api<T>(
  path: string,
  init: { method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'; body?: unknown } = {},
): Promise<T> {
  const method = init.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json' };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  const response = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await response.text();
  const body: unknown = text ? safeJson(text) : undefined;
  if (!response.ok) {
    const message =
      typeof body === 'object' && body !== null && 'message' in body
        ? String((body as { message: unknown }).message)
        : `${response.status} ${response.statusText}`;
    if (response.status === 401 && path !== '/api/session') onSignedOut();
    throw new ApiError(response.status, message, body);
  }
  return body as T;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | Error | undefined;
  loading: boolean;
  reload: () => void;
}

/** Loads `GET path` (again whenever `path` changes); `path` undefined loads nothing. */
export function useApi<T>(path: string | undefined): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({
    loading: path !== undefined,
  });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    if (path === undefined) return;
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    api<T>(path).then(
      (data) => current && setState({ data, loading: false }),
      (error: Error) => current && setState({ error, loading: false }),
    );
    return () => {
      current = false;
    };
  }, [path, generation]);
  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export interface Action {
  /** True while an action runs (its buttons are disabled). */
  busy: boolean;
  /** The last action's failure (the API's refusal), cleared when the next one starts. */
  error: Error | undefined;
  run: (action: () => Promise<void>) => Promise<void>;
}

/** Runs a form's or a button's request: busy meanwhile, its failure kept as `error`. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error>();
  const run = useCallback(async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (failure) {
      setError(failure as Error);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run };
}
