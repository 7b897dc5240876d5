/**
 * Bearer-token auth for every route that declares a scope. Tokens belong to a workspace;
 * `admin` satisfies every scope. Bound to loopback with no token created yet, requests
 * without a token go to the `default` workspace (DESIGN §4). The console's browser sends the
 * same token from its HttpOnly session cookie (src/api/console.ts) instead of the header.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { anyTokenExists, findToken } from '../store/workspaces.ts';
import type { Store } from '../store/db.ts';
import { isDatabaseUnavailable } from './errors.ts';
import type { Scope } from '../model/tokens.ts';

export type AuthFailure = { status: 401 | 403 | 503; message: string };

/** How an auth failure is written: OTLP routes answer with google.rpc.Status, the API with JSON. */
export type AuthFailureWriter = (
  request: FastifyRequest,
  reply: FastifyReply,
  failure: AuthFailure,
) => FastifyReply;

/**
 * How long a token's lookup is believed. A token revoked on another process sharing the
 * database is refused here within this time (measured by test/e2e/revocation.test.ts): short
 * enough that revocation is everywhere within a second, long enough that a busy exporter's
 * batches cost one indexed lookup per token per half second, not one per batch.
 */
const CACHE_TTL_MS = 500;
const CACHE_MAX = 1_000;
/** How long "no token exists yet" is believed (this process forgets it when it makes one). */
const OPEN_CACHE_TTL_MS = 500;

/** The console's session cookie: the token a person pasted once (HttpOnly, SameSite=Strict). */
export const SESSION_COOKIE = 'rotscope_session';

/** What the auth hook knows, for the console's session routes. */
export interface AuthLookup {
  /** True while bound to loopback with no token created: requests need no token. */
  isOpen(): Promise<boolean>;
  /** The workspace and scope of a live token, or undefined. */
  lookup(token: string): Promise<{ workspaceId: string; scope: Scope } | undefined>;
  /**
   * Forgets what is cached: called when this process creates or revokes a token, so the
   * first token closes the open state at once and a revoked token is refused at once (other
   * processes on the same database follow within the caches' lifetimes, half a second).
   */
  tokensChanged(): void;
}

export function isLoopbackHost(host: string): boolean {
  return host === '127.0.0.1' || host === '::1' || host === 'localhost' || host.startsWith('127.');
}

export function registerAuth(
  app: FastifyInstance,
  options: { store: Store; host: string; writeFailure: AuthFailureWriter },
): AuthLookup {
  const loopback = isLoopbackHost(options.host);
  const tokens = new Map<
    string,
    { value: { workspaceId: string; scope: Scope } | undefined; at: number }
  >();
  let open: { value: boolean; at: number } | undefined;

  async function isOpen(): Promise<boolean> {
    if (!loopback) return false;
    if (open && Date.now() - open.at < OPEN_CACHE_TTL_MS) return open.value;
    const value = !(await anyTokenExists(options.store.db));
    open = { value, at: Date.now() };
    return value;
  }

  async function lookup(token: string) {
    const cached = tokens.get(token);
    if (cached && Date.now() - cached.at < CACHE_TTL_MS) return cached.value;
    const value = await findToken(options.store.db, token);
    if (tokens.size >= CACHE_MAX) tokens.clear();
    tokens.set(token, { value, at: Date.now() });
    return value;
  }

  app.decorateRequest('workspaceId', '');
  app.decorateRequest('scope', undefined);
  app.addHook('onRequest', async (request, reply) => {
    const needed = request.routeOptions.config.scope;
    if (!needed) return;
    try {
      const header = request.headers.authorization;
      const session = request.cookies?.[SESSION_COOKIE];
      if (!header && !session) {
        if (await isOpen()) {
          request.workspaceId = 'default';
          request.scope = 'admin';
          return;
        }
        return options.writeFailure(request, reply, {
          status: 401,
          message: 'missing bearer token',
        });
      }
      const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
      if (header && !match) {
        return options.writeFailure(request, reply, {
          status: 401,
          message: 'the Authorization header must be "Bearer <token>"',
        });
      }
      const found = await lookup(match ? match[1]! : session!);
      if (!found)
        return options.writeFailure(request, reply, {
          status: 401,
          message: match ? 'unknown or revoked token' : 'the console session ended: sign in again',
        });
      if (found.scope !== 'admin' && found.scope !== needed) {
        return options.writeFailure(request, reply, {
          status: 403,
          message: `this token has scope "${found.scope}"; this route needs "${needed}"`,
        });
      }
      request.workspaceId = found.workspaceId;
      request.scope = found.scope;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      return options.writeFailure(request, reply, {
        status: 503,
        message: 'database unavailable, retry later',
      });
    }
  });
  function tokensChanged() {
    open = undefined;
    tokens.clear();
  }
  return { isOpen, lookup, tokensChanged };
}
