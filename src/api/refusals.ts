/**
 * Refused requests, remembered: an exporter that sends no token (or a wrong one) has every
 * batch refused, and nothing else tells its user. The auth hook's and the host guard's
 * refusals (401 and 403) are counted here per workspace, status, route, reason and sender and
 * added to the database (src/store/refusals.ts) at most once a second, so every process
 * sharing a PostgreSQL shows the same counts and a flood of refused requests costs one write a
 * second, not one per request. GET /api/coverage shows the recent ones with what to do
 * (src/reading/refusals.ts).
 *
 * What is kept is safe to show: the reason is a code from the list below (never the message's
 * own text, which can quote a Host header), the sender is the first word of its User-Agent
 * (`OTel-OTLP-Exporter-JavaScript`, `curl`; a browser is `browser`), the route is the matched
 * route's pattern. No token, header value or address is kept.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SCOPES, type Scope } from '../model/tokens.ts';
import type { Store } from '../store/db.ts';
import { addRefusals, NO_WORKSPACE, pruneRefusals, type RefusalCount } from '../store/refusals.ts';
import { SESSION_COOKIE, type AuthFailure } from './auth.ts';

/** How often counts are added to the database (at most). */
const FLUSH_MS = 1_000;
/** After a failed write (the database is down), the counts are kept and tried again this late. */
const RETRY_MS = 5_000;
/** How often a process prunes old rows. */
const PRUNE_MS = 10 * 60_000;
/** Distinct keys kept between two writes; more in one second are counted under `(other)` senders. */
const MAX_PENDING = 500;

/**
 * Why a request was refused, as a code: `missing_token`, `malformed_header`, `unknown_token`,
 * `session_ended`, `scope:<has>:<needs>` (a token of the wrong scope), `host_refused`,
 * `origin_refused` (the open server's guard), `other`.
 */
export function refusalReason(failure: AuthFailure): string {
  const { message } = failure;
  if (message === 'missing bearer token') return 'missing_token';
  if (message.startsWith('the Authorization header must be')) return 'malformed_header';
  if (message === 'unknown or revoked token') return 'unknown_token';
  if (message.startsWith('the console session ended')) return 'session_ended';
  const scope = /^this token has scope "(\w+)"; this route needs "(\w+)"$/.exec(message);
  if (scope && isScope(scope[1]!) && isScope(scope[2]!)) return `scope:${scope[1]}:${scope[2]}`;
  if (message.startsWith('Host "')) return 'host_refused';
  if (message.startsWith('Origin "')) return 'origin_refused';
  return 'other';
}

const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/** The sender's product (the User-Agent's first word), safe to keep and show. */
export function senderOf(userAgent: string | undefined): string {
  const first = (userAgent ?? '').trim().split(/[\s/;(]/)[0] ?? '';
  if (first === '') return '(none)';
  if (first.toLowerCase() === 'mozilla') return 'browser';
  const clean = first.replace(/[^A-Za-z0-9._-]/g, '').slice(0, 64);
  return clean === '' ? '(other)' : clean;
}

export interface RefusalRecorder {
  /** Counts a refused request (401 and 403; others are not lock-outs). Never throws. */
  record(request: FastifyRequest, failure: AuthFailure): void;
  /** Adds the counts so far to the database now. */
  flush(): Promise<void>;
}

/**
 * Counts refusals in memory and adds them to the database at most once a second (and when
 * the app closes). `lookup` is the auth hook's cached token lookup: a 403 was refused after its
 * token was found, so its workspace is known (and the lookup is answered from the cache).
 */
export function recordRefusals(
  app: FastifyInstance,
  options: {
    store: Store;
    lookup: (token: string) => Promise<{ workspaceId: string; scope: Scope } | undefined>;
  },
): RefusalRecorder {
  const { store } = options;
  let pending = new Map<string, RefusalCount>();
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> | undefined;
  let lastPrune = 0;
  let closed = false;

  const count = (workspaceId: string, request: FastifyRequest, failure: AuthFailure) => {
    const now = new Date();
    const row = {
      workspaceId,
      status: failure.status,
      route: `${request.method} ${request.routeOptions.url ?? '(no route)'}`.slice(0, 200),
      reason: refusalReason(failure),
      agent: senderOf(request.headers['user-agent']),
    };
    let key = JSON.stringify(Object.values(row));
    if (!pending.has(key) && pending.size >= MAX_PENDING) {
      row.agent = '(other)';
      key = JSON.stringify(Object.values(row));
    }
    const seen = pending.get(key);
    if (seen) {
      seen.count += 1;
      seen.lastSeen = now;
    } else if (pending.size < MAX_PENDING + 50) {
      pending.set(key, { ...row, count: 1, firstSeen: now, lastSeen: now });
    }
    schedule(FLUSH_MS);
  };

  const schedule = (ms: number) => {
    if (timer !== undefined || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, ms);
    timer.unref();
  };

  async function write(): Promise<void> {
    const rows = [...pending.values()];
    pending = new Map();
    if (rows.length === 0) return;
    try {
      await addRefusals(store.db, rows);
    } catch (error) {
      // kept for the next write (merged with what arrives meanwhile), unless closing
      for (const row of rows) {
        const key = JSON.stringify([row.workspaceId, row.status, row.route, row.reason, row.agent]);
        const seen = pending.get(key);
        if (!seen) {
          if (pending.size < MAX_PENDING + 50) pending.set(key, row);
          continue;
        }
        seen.count += row.count;
        if (row.firstSeen < seen.firstSeen) seen.firstSeen = row.firstSeen;
      }
      app.log.debug(
        { err: error },
        'could not store the refused requests counted (kept for later)',
      );
      schedule(RETRY_MS);
      return;
    }
    if (Date.now() - lastPrune > PRUNE_MS) {
      lastPrune = Date.now();
      await pruneRefusals(store.db).catch((error: unknown) =>
        app.log.debug({ err: error }, 'could not prune the refused requests counted'),
      );
    }
  }

  function flush(): Promise<void> {
    writing = (writing ?? Promise.resolve()).then(write);
    return writing;
  }

  app.addHook('onClose', async () => {
    closed = true;
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    await flush().catch(() => {});
  });

  return {
    record(request, failure) {
      if (closed || (failure.status !== 401 && failure.status !== 403)) return;
      try {
        if (request.workspaceId) return count(request.workspaceId, request, failure);
        const token = tokenOf(request);
        if (failure.status !== 403 || token === undefined)
          return count(NO_WORKSPACE, request, failure);
        options.lookup(token).then(
          (found) => count(found?.workspaceId ?? NO_WORKSPACE, request, failure),
          () => count(NO_WORKSPACE, request, failure),
        );
      } catch (error) {
        app.log.warn({ err: error }, 'could not count a refused request');
      }
    },
    flush,
  };
}

/** The token a request presents: its bearer token, else its console session. */
function tokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (match) return match[1];
  return header ? undefined : request.cookies?.[SESSION_COOKIE];
}
