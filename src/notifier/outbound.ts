/**
 * Outbound HTTP for channels: one POST, no redirects followed, the destination address
 * checked when the socket connects (the address actually dialled, not just the hostname,
 * so DNS rebinding cannot slip past the check), the response body read with a size cap.
 *
 * Expected failures are values: `postJson` resolves with an {@link HttpOutcome} and never
 * rejects for network errors, timeouts, refusals or error statuses.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { checkAddress, checkHostname } from './addresses.ts';

export { checkAddress, checkHostname } from './addresses.ts';

/**
 * Resolves a host name to its addresses, as `dns.lookup(name, { all: true })` does. The
 * system resolver is the default; tests pass their own so that no lookup leaves the machine
 * and the decisions taken on the answer can be asserted.
 */
export type Resolver = (hostname: string) => Promise<dns.LookupAddress[]>;

/** The operating system's resolver (getaddrinfo: hosts file, then DNS). */
export const systemResolver: Resolver = (hostname) =>
  dns.promises.lookup(hostname, { all: true, verbatim: true });

/** An error raised inside the connect path when the resolved address is refused. */
class BlockedAddressError extends Error {
  readonly code = 'EBLOCKED';
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/**
 * A `dns.lookup` replacement for `http.request({ lookup })`: resolves with `resolve`, then
 * refuses the connection when any resolved address is not allowed. Runs at connect time, so
 * the address checked is the address dialled.
 */
export function guardedLookup(allowPrivate: boolean, resolve: Resolver = systemResolver) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    resolve(hostname).then(
      (resolved) => {
        const addresses =
          options.family === 4 || options.family === 6
            ? resolved.filter((entry) => entry.family === options.family)
            : resolved;
        for (const entry of addresses) {
          const reason = checkAddress(entry.address, allowPrivate);
          if (reason) return callback(new BlockedAddressError(`${hostname}: ${reason}`), []);
        }
        if (options.all) return callback(null, addresses);
        const first = addresses[0];
        if (!first)
          return callback(
            Object.assign(new Error(`${hostname}: no address`), { code: 'ENOTFOUND' }),
            [],
          );
        callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  };
}

/** Where {@link resolveAllowed} came to: an allowed address, or why not. */
export type ResolveOutcome =
  | { ok: true; address: string }
  /** `blocked`: the destination is refused; otherwise the name could not be resolved. */
  | { ok: false; error: string; blocked: boolean };

/**
 * Resolves a hostname to one allowed address (for clients that cannot take a lookup hook,
 * such as the SMTP transport: they then dial this address). Refuses when any resolved
 * address is not allowed. Never rejects.
 */
export async function resolveAllowed(
  hostname: string,
  allowPrivate: boolean,
  resolve: Resolver = systemResolver,
): Promise<ResolveOutcome> {
  const hostReason = checkHostname(hostname, allowPrivate);
  if (hostReason) return { ok: false, error: hostReason, blocked: true };
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(bare) !== 0) return { ok: true, address: bare };
  try {
    const addresses = await resolve(bare);
    for (const entry of addresses) {
      const reason = checkAddress(entry.address, allowPrivate);
      if (reason) return { ok: false, error: `${bare}: ${reason}`, blocked: true };
    }
    const first = addresses[0];
    if (!first) return { ok: false, error: `${bare}: no address`, blocked: false };
    return { ok: true, address: first.address };
  } catch (error) {
    return { ok: false, error: `${bare}: ${errorMessage(error)}`, blocked: false };
  }
}

/** What one POST came to. `blocked` and `invalid_url` are configuration problems. */
export type HttpOutcome =
  | {
      kind: 'response';
      status: number;
      headers: http.IncomingHttpHeaders;
      /** The body, at most `maxResponseBytes`, decoded as UTF-8. */
      body: string;
      truncated: boolean;
    }
  | { kind: 'network'; error: string }
  | { kind: 'timeout'; error: string }
  | { kind: 'blocked'; error: string }
  | { kind: 'invalid_url'; error: string };

export interface PostOptions {
  body: string;
  headers?: Record<string, string>;
  /** Aborts the request (the delivery loop's per-send timeout). */
  signal?: AbortSignal;
  /** Allow private, loopback and link-local destinations. Default false. */
  allowPrivate?: boolean;
  /** Resolves the URL's host name. Default {@link systemResolver}. */
  resolve?: Resolver;
  /** Largest response body kept (bytes); the rest is discarded. Default 64 KiB. */
  maxResponseBytes?: number;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * POSTs a body. Redirects are never followed (a 3xx comes back as a response); the
 * destination is checked at connect time; the response body is read up to a cap.
 */
export function postJson(url: string, options: PostOptions): Promise<HttpOutcome> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return Promise.resolve({ kind: 'invalid_url', error: 'invalid URL' });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return Promise.resolve({ kind: 'invalid_url', error: `unsupported scheme ${parsed.protocol}` });
  }
  const allowPrivate = options.allowPrivate ?? false;
  const hostReason = checkHostname(parsed.hostname, allowPrivate);
  if (hostReason) return Promise.resolve({ kind: 'blocked', error: hostReason });
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const body = Buffer.from(options.body, 'utf8');
  const client = parsed.protocol === 'https:' ? https : http;

  return new Promise<HttpOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: HttpOutcome) => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const onAbort = () => {
      finish({ kind: 'timeout', error: 'timed out' });
      request.destroy();
    };
    const request = client.request(parsed, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'rotscope',
        ...options.headers,
        'content-length': String(body.length),
      },
      lookup: guardedLookup(allowPrivate, options.resolve) as unknown as typeof dns.lookup,
      agent: false,
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error instanceof BlockedAddressError) finish({ kind: 'blocked', error: error.message });
      else finish({ kind: 'network', error: errorMessage(error) });
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      const done = () =>
        finish({
          kind: 'response',
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          truncated,
        });
      response.on('data', (chunk: Buffer) => {
        if (truncated) return;
        const room = maxBytes - size;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          size = maxBytes;
          truncated = true;
          // Enough read: stop the transfer instead of draining an endless body.
          done();
          response.destroy();
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
      });
      response.on('end', done);
      response.on('error', (error) => finish({ kind: 'network', error: errorMessage(error) }));
      response.on('close', done);
    });
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    request.end(body);
  });
}

/** The message of an unknown error, with its code when it has one. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
