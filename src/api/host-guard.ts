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
 *   to (the same scheme-less `host:port` as its `Host`), which must pass the rule above;
 * - `Host` (and the authority of `Origin`) is read strictly, `host[:port]` and nothing else,
 *   and a request with two `Host` headers is refused: Node keeps the first of two, and a lax
 *   reading of `127.0.0.1:PORT@attacker.example` found a loopback name in it (issue 33), where
 *   a proxy or the browser may well have seen another host.
 * A request with no `Host` (HTTP/1.0) or no `Origin` (curl, exporters, the CLI) is no web page's.
 * Once a token exists every request needs it, and the console's cookie is bound to the name
 * the user signed in on, so the guard has nothing left to add and steps aside.
 */
import { isIP } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthFailureWriter } from './auth.ts';
import { isDatabaseUnavailable } from './errors.ts';

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * An RFC 3986 authority without userinfo, lower-cased: host [":" port], the host a bracketed
 * IPv6 address or a reg-name (IPv4 addresses are reg-names too). The reg-name is narrowed to
 * the letters, digits, `-` and `_` of DNS labels, dot-separated with an optional final dot:
 * RFC 3986 also allows sub-delims and percent-escapes, which no loopback name or public host
 * needs. Anything else (`@`, a path, a query, whitespace, an empty or non-digit port) fails.
 */
const AUTHORITY = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?))(?::\d{1,5})?$/;

/**
 * The host name of a `Host` header or URL authority (`[::1]:4318` → `::1`), lower-cased and
 * without a final dot; undefined when it is not exactly an authority (see AUTHORITY).
 */
export function hostName(authority: string): string | undefined {
  const match = AUTHORITY.exec(authority.trim().toLowerCase());
  if (match === null) return undefined;
  const [, ipv6, regName] = match;
  if (ipv6 !== undefined) return isIP(ipv6) === 6 ? ipv6 : undefined;
  return regName?.replace(/\.$/, '');
}

/** How many `Host` headers a request carried; Node's `headers.host` shows only the first. */
export function hostHeaderCount(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2)
    if (rawHeaders[i]!.toLowerCase() === 'host') count++;
  return count;
}

/**
 * The authority of an `Origin` header, lower-cased: the header must be exactly
 * `http(s)://authority` (RFC 6454 serialization: no userinfo, path, query or fragment);
 * undefined otherwise (`null` included).
 */
function originAuthority(origin: string): string | undefined {
  const match = /^https?:\/\/([^/?#]*)$/i.exec(origin.trim());
  const authority = match?.[1]?.toLowerCase();
  return authority !== undefined && hostName(authority) !== undefined ? authority : undefined;
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
  publicHost?: string | undefined;
}

/** Why a request is refused by the open server's guard, or undefined when it may pass. */
export function hostRefusal(
  rule: HostRule,
  request: {
    method: string;
    host: string | undefined;
    origin: string | undefined;
    /** How many Host headers it carried (hostHeaderCount); one when left out. */
    hostHeaders?: number;
  },
): string | undefined {
  const allowed = (name: string | undefined) =>
    name !== undefined && (isLoopbackName(name) || name === rule.publicHost);
  const accepted = `loopback names and addresses (localhost, 127.0.0.1, [::1])${rule.publicHost ? ` and ${rule.publicHost} (ROTSCOPE_PUBLIC_URL)` : ''}`;
  if ((request.hostHeaders ?? 1) > 1)
    return `${request.hostHeaders} Host headers refused: while no token exists this server answers only requests with one`;
  if (request.host !== undefined && !allowed(hostName(request.host)))
    return `Host "${request.host}" refused: while no token exists this server answers only ${accepted}. Set ROTSCOPE_PUBLIC_URL to the address you use, or create a token (rotscope token create)`;
  if (!UNSAFE_METHODS.has(request.method) || request.origin === undefined) return undefined;
  // The Host passed the rule above, so an Origin of the same authority passes it too.
  const sameOrigin =
    request.host !== undefined &&
    originAuthority(request.origin) === request.host.trim().toLowerCase();
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
      hostHeaders: hostHeaderCount(request.raw.rawHeaders),
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
