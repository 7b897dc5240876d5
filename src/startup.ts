/**
 * Why `rotscope serve` could not start, said in one line with the fix: the port in use (and by
 * which process, where /proc tells), a data directory that is not writable, a database that
 * does not answer, a schema newer than this code. serve() checks the port before it touches the
 * store, and releases what it took (loops, the data directory's lock, the pool) when a later
 * step fails, so the command exits at once instead of running on without listening.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Config } from './config.ts';
import { isDatabaseUnavailable } from './store/connection-errors.ts';

/** A start-up failure whose message names the cause and the fix. */
export class StartupError extends Error {
  readonly code = 'STARTUP_FAILED';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}

/** Resolves with the error of binding `host:port` (e.g. EADDRINUSE), or null when it is free. */
export function tryBind(host: string, port: number): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(null)));
  });
}

/** The sockets listening on TCP `port` (hex inode numbers) in /proc/net/tcp{,6}. */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN; field 9 is the inode
      if (f.length > 9 && f[1]!.endsWith(`:${hexPort}`) && f[3] === '0A') inodes.add(f[9]!);
    }
  }
  return inodes;
}

/**
 * "pid 123: node bin/rotscope.js serve" for the process listening on `port`, when this
 * machine's /proc says (Linux, a process this user may inspect); else null.
 */
export function portHolder(port: number): string | null {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return null;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return null;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const m = /^socket:\[(\d+)\]$/.exec(target);
      if (m === null || !inodes.has(m[1]!)) continue;
      let command = '';
      try {
        command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      } catch {
        // the process is gone or hidden: the pid is still worth saying
      }
      return command === '' ? `pid ${pid}` : `pid ${pid}: ${command.slice(0, 120)}`;
    }
  }
  return null;
}

/** Errors of creating or writing the data directory that its path or permissions cause. */
const NOT_WRITABLE = new Set(['EACCES', 'EROFS', 'EPERM', 'ENOTDIR', 'EEXIST', 'EISDIR']);

function portInUseMessage(config: Config): string {
  const holder = portHolder(config.port);
  return (
    `port ${config.port} on ${config.host} is in use${holder === null ? '' : ` (by ${holder})`}: ` +
    'stop that process, or choose another port with --port (ROTSCOPE_PORT)'
  );
}

/** Throws a StartupError when `config.port` cannot be bound (port 0 picks a free one). */
export async function assertPortFree(config: Config): Promise<void> {
  if (config.port === 0) return;
  const error = await tryBind(config.host, config.port);
  if (error !== null) throw explainStartupFailure(error, config);
}

/**
 * The StartupError for `error`: its cause and fix in one line. Errors that already say both
 * (the data directory's lock, a schema newer than the code) keep their message.
 */
export function explainStartupFailure(error: unknown, config: Config): StartupError {
  if (error instanceof StartupError) return error;
  const e = error as NodeJS.ErrnoException & { name?: string; syscall?: string; path?: string };
  const code = e?.code;
  if (e?.name === 'DataDirLockedError' || e?.name === 'SchemaNewerError')
    return new StartupError(String(e.message), { cause: error });
  if (code === 'EADDRINUSE') return new StartupError(portInUseMessage(config), { cause: error });
  if (code === 'EADDRNOTAVAIL')
    return new StartupError(
      `${config.host} is not an address of this machine: bind another with --host (ROTSCOPE_HOST)`,
      { cause: error },
    );
  if (code === 'EACCES' && e.syscall === 'listen')
    return new StartupError(
      `port ${config.port} needs privileges this process lacks: choose a port above 1023 with --port (ROTSCOPE_PORT)`,
      { cause: error },
    );
  if (config.databaseUrl === undefined && code !== undefined && NOT_WRITABLE.has(code))
    return new StartupError(
      `the data directory ${config.dataDir} is not writable (${code}${e.path ? ` on ${e.path}` : ''}): ` +
        'fix its permissions, or choose another with --data-dir (ROTSCOPE_DATA_DIR)',
      { cause: error },
    );
  if (config.databaseUrl === undefined && code === 'ENOSPC')
    return new StartupError(
      `no space left for the data directory ${config.dataDir}: free some, or choose another with --data-dir (ROTSCOPE_DATA_DIR)`,
      { cause: error },
    );
  if (config.databaseUrl !== undefined && isDatabaseUnavailable(error))
    return new StartupError(
      `the database at ${describeDatabase(config.databaseUrl)} does not answer (${code ?? String(e?.message ?? error)}): ` +
        'start it or fix DATABASE_URL, or unset DATABASE_URL to use the embedded database',
      { cause: error },
    );
  return new StartupError(`could not start: ${e instanceof Error ? e.message : String(error)}`, {
    cause: error,
  });
}

/** host:port/database of a postgres:// URL, without credentials. */
function describeDatabase(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'DATABASE_URL';
  }
}
