/**
 * The test network guard: in a process that loads it, nothing can connect to or look up any
 * host but loopback (127.0.0.0/8, ::1 and `localhost` names). Refused attempts fail, before
 * any packet is sent, with an error whose code is `ERR_TEST_NETWORK_GUARD`, and are reported
 * once per destination on stderr.
 *
 * Loaded into every vitest worker (`setupFiles` in vitest.config.ts) and, through
 * `NODE_OPTIONS=--import <this file>`, into every Node child process the tests start: the
 * guard puts itself into `process.env.NODE_OPTIONS` and into the `env` of every
 * child_process call that passes one. Processes that are not Node (a browser, a native CLI)
 * are not covered.
 *
 * What is guarded:
 * - `net.Socket.prototype.connect`, which `net.connect`, `tls.connect`, `http`, `https`,
 *   `http2` and fetch (undici) all go through: a literal address must be loopback; a host
 *   name must resolve (through the caller's `lookup` or `dns.lookup`) to loopback only.
 * - `dns.lookup` / `dns.promises.lookup`: `localhost` names are answered here (127.0.0.1,
 *   ::1) and loopback literals passed through; every other name is refused unlooked-up.
 * - every c-ares query (`dns.resolve*`, `dns.reverse`, `dns.Resolver`, the promise forms) and
 *   `dns.lookupService`: refused, they would send a query to a name server.
 *
 * Plain JavaScript (no TypeScript loader needed) so a bare `node` child can preload it.
 */
import childProcess from 'node:child_process';
import { promisify } from 'node:util';
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The code of every refusal. */
export const GUARD_CODE = 'ERR_TEST_NETWORK_GUARD';

const INSTALLED = Symbol.for('rotscope.test.networkGuard');
const IMPORT_FLAG = `--import=${pathToFileURL(fileURLToPath(import.meta.url)).href}`;

const LOOPBACK = new net.BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4'); // also matches ::ffff:127.x.y.z
LOOPBACK.addAddress('::1', 'ipv6');

/** Whether a host (an address or a name, as written in a URL or passed to connect) is loopback. */
export function isLoopbackHost(host) {
  const bare = String(host)
    .replace(/^\[|\]$/g, '')
    .replace(/%.*$/, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  const family = net.isIP(bare);
  if (family === 0) return false;
  return LOOPBACK.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

/** Whether the guard is active in this process. */
export function isNetworkGuardInstalled() {
  return globalThis[INSTALLED] === true;
}

const reported = new Set();

/** The error a refused attempt fails with; reported once per destination on stderr. */
function refusal(what, target) {
  const error = new Error(
    `test network guard: ${what} ${target} refused (tests may only reach 127.0.0.0/8 and ::1)`,
  );
  error.code = GUARD_CODE;
  if (!reported.has(`${what} ${target}`)) {
    reported.add(`${what} ${target}`);
    process.stderr.write(`[network-guard] refused ${what} ${target} (pid ${process.pid})\n`);
  }
  return error;
}

/** Answers a `localhost` name without asking the system, in the shapes `dns.lookup` has. */
function localhostAnswer(options) {
  const asked = typeof options === 'object' && options !== null ? options.family : options;
  const family = asked === 'IPv4' ? 4 : asked === 'IPv6' ? 6 : Number(asked ?? 0);
  return [
    { address: '127.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ].filter((entry) => family === 0 || entry.family === family);
}

/**
 * 0.0.0.0 and ::, which a server binds to listen on every interface (fastify looks the bind
 * address up first). Looking up an address literal asks no name server (Node answers it
 * itself), and connecting to one is still refused by the socket guard.
 */
function isUnspecified(host) {
  return host === '0.0.0.0' || host === '::';
}

function installDnsGuard() {
  const originalLookup = dns.lookup;
  dns.lookup = function guardedLookup(hostname, options, callback) {
    const done = typeof options === 'function' ? options : callback;
    const opts = typeof options === 'function' ? undefined : options;
    const bare = String(hostname ?? '').toLowerCase();
    if (net.isIP(bare) !== 0 && (isLoopbackHost(bare) || isUnspecified(bare)))
      return originalLookup.call(this, hostname, opts ?? {}, done);
    if (isLoopbackHost(bare)) {
      const answer = localhostAnswer(opts);
      const first = answer[0];
      if (typeof opts === 'object' && opts?.all) process.nextTick(done, null, answer);
      else process.nextTick(done, null, first.address, first.family);
      return {};
    }
    process.nextTick(done, refusal('DNS lookup of', hostname));
    return {};
  };
  dns.promises.lookup = async function guardedPromiseLookup(hostname, options) {
    const bare = String(hostname ?? '').toLowerCase();
    if (!isLoopbackHost(bare) && !isUnspecified(bare)) throw refusal('DNS lookup of', hostname);
    const answer =
      net.isIP(bare) !== 0 ? [{ address: bare, family: net.isIP(bare) }] : localhostAnswer(options);
    return typeof options === 'object' && options?.all ? answer : answer[0];
  };
  const refuseCallback = (name) =>
    function guardedQuery(...args) {
      const done = args.findLast((arg) => typeof arg === 'function');
      if (done) process.nextTick(done, refusal(`DNS ${name} of`, args[0]));
      else throw refusal(`DNS ${name} of`, args[0]);
      return undefined;
    };
  const refusePromise = (name) =>
    async function guardedQuery(...args) {
      throw refusal(`DNS ${name} of`, args[0]);
    };
  const queries = Object.getOwnPropertyNames(dns.Resolver.prototype).filter((name) =>
    /^(resolve|reverse)/.test(name),
  );
  for (const name of [...queries, 'lookupService']) {
    if (typeof dns[name] === 'function') dns[name] = refuseCallback(name);
    if (typeof dns.promises[name] === 'function') dns.promises[name] = refusePromise(name);
  }
  for (const name of queries) {
    dns.Resolver.prototype[name] = refuseCallback(name);
    dns.promises.Resolver.prototype[name] = refusePromise(name);
  }
}

/** Wraps a `lookup` so that it may only hand loopback addresses to the socket. */
function loopbackOnlyLookup(lookup, host) {
  return function guardedSocketLookup(hostname, options, callback) {
    const done = typeof options === 'function' ? options : callback;
    const opts = typeof options === 'function' ? {} : options;
    lookup(hostname, opts, (error, address, family) => {
      if (error) return done(error, address, family);
      const addresses = Array.isArray(address) ? address.map((entry) => entry.address) : [address];
      const outside = addresses.find((entry) => !isLoopbackHost(entry));
      if (outside !== undefined) return done(refusal('connection to', `${host} (${outside})`));
      return done(null, address, family);
    });
  };
}

function installConnectGuard() {
  const originalConnect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function guardedConnect(...args) {
    // net.connect() passes its already normalized [options, callback] as one array.
    const [options, callback] = Array.isArray(args[0]) ? args[0] : net._normalizeArgs(args);
    if (options.path !== undefined) return originalConnect.apply(this, args);
    const host = options.host ?? 'localhost';
    if (net.isIP(String(host).replace(/%.*$/, '')) !== 0) {
      if (isLoopbackHost(host)) return originalConnect.apply(this, args);
      const error = refusal('connection to', `${host}:${options.port}`);
      process.nextTick(() => this.destroy(error));
      return this;
    }
    const guarded = {
      ...options,
      lookup: loopbackOnlyLookup(options.lookup ?? dns.lookup, `${host}:${options.port}`),
    };
    return typeof callback === 'function'
      ? originalConnect.call(this, guarded, callback)
      : originalConnect.call(this, guarded);
  };
}

/** `NODE_OPTIONS` with the guard's `--import` added once. */
function withGuardImport(nodeOptions) {
  const current = nodeOptions ?? '';
  return current.includes(IMPORT_FLAG) ? current : `${current} ${IMPORT_FLAG}`.trim();
}

/** Makes every child_process call hand the guard to Node children, even with its own `env`. */
function installChildGuard() {
  process.env.NODE_OPTIONS = withGuardImport(process.env.NODE_OPTIONS);
  for (const name of [
    'spawn',
    'spawnSync',
    'fork',
    'exec',
    'execSync',
    'execFile',
    'execFileSync',
  ]) {
    const original = childProcess[name];
    childProcess[name] = function guardedChildProcess(...args) {
      const options = args.find(
        (arg, index) => index > 0 && arg !== null && typeof arg === 'object' && !Array.isArray(arg),
      );
      if (options?.env) {
        const index = args.indexOf(options);
        args[index] = {
          ...options,
          env: { ...options.env, NODE_OPTIONS: withGuardImport(options.env.NODE_OPTIONS) },
        };
      }
      return original.apply(this, args);
    };
    // util.promisify(exec/execFile) resolves { stdout, stderr } through this symbol; keep it.
    const custom = original[promisify.custom];
    if (custom) {
      childProcess[name][promisify.custom] = (...args) => {
        const options = args.find(
          (arg, index) =>
            index > 0 && arg !== null && typeof arg === 'object' && !Array.isArray(arg),
        );
        if (options?.env) {
          args[args.indexOf(options)] = {
            ...options,
            env: { ...options.env, NODE_OPTIONS: withGuardImport(options.env.NODE_OPTIONS) },
          };
        }
        return custom.apply(childProcess, args);
      };
    }
  }
}

if (!isNetworkGuardInstalled()) {
  globalThis[INSTALLED] = true;
  installDnsGuard();
  installConnectGuard();
  installChildGuard();
  // ESM named imports of builtins (`import { lookup } from 'node:dns'`) see the guarded ones.
  syncBuiltinESMExports();
}
