/**
 * The open server's guard against web pages (docs/security.md). Bound to loopback with no
 * token yet, rotscope answers without a token, so what stands between a web page and the
 * stored conversations is the browser's same-origin rule. DNS rebinding walks around it: a
 * page on `attacker.example` points its name at 127.0.0.1 and is then "same-origin" with us.
 * What gives it away is the `Host` it sends (and the `Origin` of what it posts), so while the
 * server is open:
 * - `Host` must be a loopback name or address (`localhost`, `*.localhost`, 127.0.0.0/8,
 *   `[::1]`) or the host of the configured public URL (`ROTSCOPE_PUBLIC_URL`);
 * - a state-changing request that carries `Origin` must come from the very origin it is sent
 *   to (the same scheme-less `host:port` as its `Host`), which must pass the rule above.
 * A request with no `Host` (HTTP/1.0) or no `Origin` (curl, exporters, the CLI) is no web page's.
 * Once a token exists every request needs it, and the console's cookie is bound to the name
 * the user signed in on, so the guard has nothing left to add and steps aside.
 */
import { isIP } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthFailureWriter } from './auth.ts';
import { isDatabaseUnavailable } from './errors.ts';

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The host name of a `Host` header or URL authority (`[::1]:4318` → `::1`), lower-cased. */
export function hostName(authority: string): string {
  const value = authority.trim().toLowerCase();
  if (value.startsWith('[')) {
    const close = value.indexOf(']');
    return value.slice(1, close === -1 ? undefined : close);
  }
  const colon = value.lastIndexOf(':');
  return (colon === -1 ? value : value.slice(0, colon)).replace(/\.$/, '');
}

/** Whether a host name is loopback by itself: no resolver can point it elsewhere. */
export function isLoopbackName(name: string): boolean {
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIP(name) === 4) return name.startsWith('127.');
  if (isIP(name) === 6) return name === '::1' || name === '0:0:0:0:0:0:0:1';
  return false;
}

export interface HostRule {
  /** The host of ROTSCOPE_PUBLIC_URL, accepted as well. */
  publicHost?: string;
}

/** Why a request is refused by the open server's guard, or undefined when it may pass. */
export function hostRefusal(
  rule: HostRule,
  request: { method: string; host: string | undefined; origin: string | undefined },
): string | undefined {
  const allowed = (name: string) => isLoopbackName(name) || name === rule.publicHost;
  const accepted = `loopback names and addresses (localhost, 127.0.0.1, [::1])${rule.publicHost ? ` and ${rule.publicHost} (ROTSCOPE_PUBLIC_URL)` : ''}`;
  if (request.host !== undefined && !allowed(hostName(request.host)))
    return `Host "${request.host}" refused: while no token exists this server answers only ${accepted}. Set ROTSCOPE_PUBLIC_URL to the address you use, or create a token (rotscope token create)`;
  if (!UNSAFE_METHODS.has(request.method) || request.origin === undefined) return undefined;
  let origin: URL | undefined;
  try {
    origin = new URL(request.origin);
  } catch {
    origin = undefined;
  }
  const sameOrigin =
    origin !== undefined &&
    (origin.protocol === 'http:' || origin.protocol === 'https:') &&
    request.host !== undefined &&
    origin.host === request.host.toLowerCase() &&
    allowed(hostName(origin.host));
  if (!sameOrigin)
    return `Origin "${request.origin}" refused: while no token exists this server takes changes only from its own pages`;
  return undefined;
}

export interface HostGuardOptions extends HostRule {
  /** True while the server answers without a token (src/api/auth.ts). */
  isOpen(): Promise<boolean>;
  /** Writes (and counts) a refusal the way auth refusals are written. */
  refuse: AuthFailureWriter;
}

/** Registers the guard as an `onRequest` hook, before every route runs. */
export function registerHostGuard(app: FastifyInstance, options: HostGuardOptions): void {
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const reason = hostRefusal(options, {
      method: request.method,
      host: request.headers.host,
      origin: request.headers.origin,
    });
    // Loopback hosts and same-origin posts pass without a look at the database.
    if (reason === undefined) return;
    let open: boolean;
    try {
      open = await options.isOpen();
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      return options.refuse(request, reply, {
        status: 503,
        message: 'database unavailable, retry later',
      });
    }
    if (open) return options.refuse(request, reply, { status: 403, message: reason });
  });
}
