/**
 * Which destinations a channel may reach. Pure: no I/O, no DNS (names are resolved by the
 * caller, see `outbound.ts`). Unless private addresses are allowed (for one channel by its
 * `config.allowPrivateAddress`, for the server by `ROTSCOPE_ALLOW_PRIVATE_ADDRESSES`), private, loopback, link-local (cloud metadata),
 * shared, multicast, documentation and reserved addresses are refused, and so is every IPv6
 * form that carries one of them: IPv4-compatible `::a.b.c.d`, IPv4-mapped `::ffff:a.b.c.d`,
 * IPv4-translated `::ffff:0:a.b.c.d`, 6to4 `2002:AABB:CCDD::/48` and NAT64 `64:ff9b::a.b.c.d`
 * are judged by the IPv4 address they embed.
 *
 * Addresses are parsed by `ipaddr.js` (every IPv6 text form: zero compression, dotted tails,
 * zone ids), so the ranges below are matched on bytes, never on spellings.
 */
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/** The server-wide setting that lets every channel reach private addresses. */
export const ALLOW_PRIVATE_SETTING = 'ROTSCOPE_ALLOW_PRIVATE_ADDRESSES';

/** The channel setting that lets one channel reach private addresses (no restart needed). */
export const ALLOW_PRIVATE_CHANNEL_KEY = 'allowPrivateAddress';

/** How to allow it, named in every refusal: per channel first (an admin, no restart), then server-wide. */
const ALLOW_HINT = `to allow it, turn on "Allow private address" for this channel (config.${ALLOW_PRIVATE_CHANNEL_KEY}: true) or set ${ALLOW_PRIVATE_SETTING}=true for the whole server`;

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

/** IPv4 ranges refused (IANA special-purpose ranges that are not globally reachable). */
const BLOCKED_IPV4 = [
  '0.0.0.0/8', // "this network"
  '10.0.0.0/8', // private
  '100.64.0.0/10', // shared (CGNAT)
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local: cloud metadata at 169.254.169.254
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // documentation (TEST-NET-1)
  '192.168.0.0/16', // private
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation (TEST-NET-2)
  '203.0.113.0/24', // documentation (TEST-NET-3)
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, broadcast
].map((cidr) => ipaddr.IPv4.parseCIDR(cidr));

/**
 * IPv6 ranges refused. `::` and `::1` are not listed: they are IPv4-compatible forms of
 * 0.0.0.0 and 0.0.0.1, refused as such.
 */
const BLOCKED_IPV6 = [
  '64:ff9b:1::/48', // NAT64 local use (RFC 8215): translates into the operator's own network
  '100::/64', // discard
  '2001:db8::/32', // documentation
  '3fff::/20', // documentation
  'fc00::/7', // unique local, includes fd00:ec2::254 (AWS metadata)
  'fe80::/10', // link-local
  'fec0::/10', // site-local (deprecated)
  'ff00::/8', // multicast
].map((cidr) => ipaddr.IPv6.parseCIDR(cidr));

const startsWith = (bytes: number[], prefix: number[]) =>
  prefix.every((byte, index) => bytes[index] === byte);
const ipv4Of = (bytes: number[]) => new ipaddr.IPv4(bytes);

/**
 * The IPv4 address an IPv6 address carries, when it is one of the forms that reach an IPv4
 * host: IPv4-compatible (`::/96`), IPv4-mapped (`::ffff:0:0/96`), IPv4-translated
 * (`::ffff:0:0:0/96`), NAT64 well-known prefix (`64:ff9b::/96`) and 6to4 (`2002::/16`,
 * the IPv4 address in bits 16-47).
 */
export function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const bytes = address.toByteArray();
  const zeros = (count: number) => new Array<number>(count).fill(0);
  if (
    startsWith(bytes, zeros(12)) ||
    startsWith(bytes, [...zeros(10), 0xff, 0xff]) ||
    startsWith(bytes, [...zeros(8), 0xff, 0xff, 0, 0]) ||
    startsWith(bytes, [0, 0x64, 0xff, 0x9b, ...zeros(8)])
  ) {
    return ipv4Of(bytes.slice(12));
  }
  if (startsWith(bytes, [0x20, 0x02])) return ipv4Of(bytes.slice(2, 6));
  return undefined;
}

/** Whether an IP address (any text form) lies in a refused range. Throws on non-addresses. */
function isBlocked(parsed: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (parsed.kind() === 'ipv4') {
    const v4 = parsed as ipaddr.IPv4;
    return BLOCKED_IPV4.some((range) => v4.match(range));
  }
  const v6 = parsed as ipaddr.IPv6;
  const inner = embeddedIpv4(v6);
  if (inner) return BLOCKED_IPV4.some((range) => inner.match(range));
  return BLOCKED_IPV6.some((range) => v6.match(range));
}

/**
 * Whether an IP address may be dialled. Everything is allowed when `allowPrivate` is set;
 * otherwise private, loopback, link-local, metadata, multicast, documentation and reserved
 * addresses (and IPv6 forms embedding them) are refused. Returns the reason when refused
 * (naming {@link ALLOW_PRIVATE_SETTING}), undefined when allowed.
 */
export function checkAddress(address: string, allowPrivate: boolean): string | undefined {
  if (allowPrivate) return undefined;
  if (net.isIP(address) === 0) return `not an IP address: ${address}`;
  if (!isBlocked(ipaddr.parse(address))) return undefined;
  return `address ${address} is private, loopback, link-local or reserved (${ALLOW_HINT})`;
}

/** A hostname as written in a URL or a config: brackets, a trailing dot and case dropped. */
export function bareHostname(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

/**
 * Whether a hostname may be used before it is resolved: literal IPs are checked as
 * addresses; `localhost` names and cloud metadata names are refused unless private
 * destinations are allowed. Other names pass: their resolved addresses are checked by the
 * caller. Returns the reason when refused.
 */
export function checkHostname(hostname: string, allowPrivate: boolean): string | undefined {
  const bare = bareHostname(hostname);
  if (net.isIP(bare) !== 0) return checkAddress(bare, allowPrivate);
  if (allowPrivate) return undefined;
  if (METADATA_HOSTNAMES.has(bare)) return `host ${bare} is a metadata service (${ALLOW_HINT})`;
  if (bare === 'localhost' || bare.endsWith('.localhost'))
    return `host ${bare} is loopback (${ALLOW_HINT})`;
  return undefined;
}
