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

/** Hostnames of cloud metadata services, refused like the addresses they resolve to. */
const METADATA_HOSTNAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.com',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.tencentyun.com',
  'metadata.platformequinix.com',
]);

/**
 * Ranges refused unless private addresses are allowed: "this network", private, shared
 * (CGNAT), loopback, link-local (cloud metadata lives at 169.254.169.254 and fd00:ec2::254),
 * benchmarking, multicast and reserved ranges.
 */
const BLOCKED = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local, includes fd00::/8 (AWS metadata fd00:ec2::254)
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['100::', 64], // discard
] as const) {
  BLOCKED.addSubnet(prefix, bits, 'ipv6');
}

/** The IPv4 address embedded in an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::) address. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const high = Number.parseInt(hex[1] ?? '0', 16);
    const low = Number.parseInt(hex[2] ?? '0', 16);
    return [high >> 8, high & 255, low >> 8, low & 255].join('.');
  }
  return undefined;
}

/**
 * Whether an IP address may be dialled. Everything is allowed when `allowPrivate` is set;
 * otherwise private, loopback, link-local, metadata, multicast and reserved addresses are
 * refused. Returns a reason when refused.
 */
export function checkAddress(address: string, allowPrivate: boolean): string | undefined {
  if (allowPrivate) return undefined;
  const family = net.isIP(address);
  if (family === 0) return `not an IP address: ${address}`;
  const v4 = family === 6 ? embeddedIpv4(address) : address;
  const blocked = v4 !== undefined ? BLOCKED.check(v4, 'ipv4') : BLOCKED.check(address, 'ipv6');
  return blocked ? `address ${address} is private, loopback, link-local or reserved` : undefined;
}

/** Whether a hostname (not yet resolved) may be used. Literal IPs are checked as addresses. */
export function checkHostname(hostname: string, allowPrivate: boolean): string | undefined {
  const bare = hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (net.isIP(bare) !== 0) return checkAddress(bare, allowPrivate);
  if (allowPrivate) return undefined;
  if (METADATA_HOSTNAMES.has(bare)) return `host ${bare} is a metadata service`;
  if (bare === 'localhost' || bare.endsWith('.localhost')) return `host ${bare} is loopback`;
  return undefined;
}

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
 * A `dns.lookup` replacement for `http.request({ lookup })`: resolves as usual, then refuses
 * the connection when any resolved address is not allowed. Runs at connect time, so the
 * address checked is the address dialled.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
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
    });
  };
}

/**
 * Resolves a hostname to one allowed address (for clients that cannot take a lookup hook,
 * such as the SMTP transport: they then dial this address). Refuses when any resolved
 * address is not allowed.
 */
export async function resolveAllowed(
  hostname: string,
  allowPrivate: boolean,
): Promise<{ ok: true; address: string } | { ok: false; error: string; blocked: boolean }> {
  const hostReason = checkHostname(hostname, allowPrivate);
  if (hostReason) return { ok: false, error: hostReason, blocked: true };
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(bare) !== 0) return { ok: true, address: bare };
  try {
    const addresses = await dns.promises.lookup(bare, { all: true });
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
      lookup: guardedLookup(allowPrivate) as unknown as typeof dns.lookup,
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
