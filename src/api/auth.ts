/**
 * Bearer-token auth for every route that declares a scope. Tokens belong to a workspace;
 * `admin` satisfies every scope. Bound to loopback with no token created yet, requests
 * without a token go to the `default` workspace (DESIGN §4).
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

const CACHE_TTL_MS = 10_000;
const CACHE_MAX = 1_000;

export function isLoopbackHost(host: string): boolean {
  return host === '127.0.0.1' || host === '::1' || host === 'localhost' || host.startsWith('127.');
}

export function registerAuth(
  app: FastifyInstance,
  options: { store: Store; host: string; writeFailure: AuthFailureWriter },
): void {
  const loopback = isLoopbackHost(options.host);
  const tokens = new Map<
    string,
    { value: { workspaceId: string; scope: Scope } | undefined; at: number }
  >();
  let open: { value: boolean; at: number } | undefined;

  async function isOpen(): Promise<boolean> {
    if (!loopback) return false;
    if (open && Date.now() - open.at < 2_000) return open.value;
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
  app.addHook('onRequest', async (request, reply) => {
    const needed = request.routeOptions.config.scope;
    if (!needed) return;
    try {
      const header = request.headers.authorization;
      if (!header) {
        if (await isOpen()) {
          request.workspaceId = 'default';
          return;
        }
        return options.writeFailure(request, reply, {
          status: 401,
          message: 'missing bearer token',
        });
      }
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!match) {
        return options.writeFailure(request, reply, {
          status: 401,
          message: 'the Authorization header must be "Bearer <token>"',
        });
      }
      const found = await lookup(match[1]!);
      if (!found)
        return options.writeFailure(request, reply, {
          status: 401,
          message: 'unknown or revoked token',
        });
      if (found.scope !== 'admin' && found.scope !== needed) {
        return options.writeFailure(request, reply, {
          status: 403,
          message: `this token has scope "${found.scope}"; this route needs "${needed}"`,
        });
      }
      request.workspaceId = found.workspaceId;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      return options.writeFailure(request, reply, {
        status: 503,
        message: 'database unavailable, retry later',
      });
    }
  });
}
