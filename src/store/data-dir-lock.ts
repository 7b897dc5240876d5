/**
 * One process per embedded-database directory. PGlite is single-process: two processes on
 * one directory silently lose each other's writes. The holder keeps `rotscope.lock` in the
 * directory (created with O_EXCL), holding `{ pid, port, url, startedAt }`; `url` is set once
 * a server listens, so other commands can go through it. A lock whose process is gone (a
 * server killed with SIGKILL) is stale and taken over. The lock is released on close and,
 * failing that, when the process exits.
 */
import {
  closeSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';

export const LOCK_FILE = 'rotscope.lock';

/** An unparsable lock younger than this is one being written right now, not a stale one. */
const WRITING_GRACE_MS = 5_000;

/** What the lock file says about its holder. */
export interface DataDirHolder {
  pid: number;
  /** The port the holder's server listens on; null until it listens (or for other commands). */
  port: number | null;
  /** The holder server's base URL (e.g. `http://127.0.0.1:4318`); null when it serves none. */
  url: string | null;
  /** ISO time the lock was taken. */
  startedAt: string;
}

/** The directory is held by a live process; `holder` is undefined while its lock is being written. */
export class DataDirLockedError extends Error {
  readonly code = 'DATA_DIR_LOCKED';
  constructor(
    readonly dataDir: string,
    readonly holder: DataDirHolder | undefined,
  ) {
    super(
      `the data directory ${dataDir} is in use by ${describeHolder(holder)}; ` +
        'the embedded database allows one process at a time: stop that process, use another ' +
        '--data-dir, or set DATABASE_URL to share a PostgreSQL',
    );
    this.name = 'DataDirLockedError';
  }
}

/** "rotscope (pid 123, serving http://127.0.0.1:4318, since …)", for messages. */
export function describeHolder(holder: DataDirHolder | undefined): string {
  if (!holder) return 'another rotscope process that is starting';
  const serving = holder.url ? `serving ${holder.url}` : 'not serving HTTP';
  return `rotscope (pid ${holder.pid}, ${serving}, since ${holder.startedAt})`;
}

export interface DataDirLock {
  /** The lock file's path. */
  readonly file: string;
  /** Records the server's address in the lock, for commands that find the directory held. */
  advertise(url: string): void;
  /** Removes the lock (when it is still this process's). Safe to call twice. */
  release(): void;
}

/** Whether a process is alive; injectable for tests. */
export type IsAlive = (pid: number) => boolean;

const held = new Map<string, DataDirHolder>();
let exitHookInstalled = false;

/**
 * Takes the directory's lock or throws DataDirLockedError naming the live holder. A lock left
 * by a dead process (or by an earlier process that had this same pid, e.g. a restarted
 * container) is taken over.
 */
export function acquireDataDirLock(
  dataDir: string,
  isAlive: IsAlive = processIsAlive,
): DataDirLock {
  const file = path.join(path.resolve(dataDir), LOCK_FILE);
  const mine = held.get(file);
  if (mine) throw new DataDirLockedError(dataDir, mine);
  for (let attempt = 0; attempt < 5; attempt++) {
    const holder: DataDirHolder = {
      pid: process.pid,
      port: null,
      url: null,
      startedAt: new Date().toISOString(),
    };
    if (createExclusive(file, JSON.stringify(holder))) return register(file, holder);
    const existing = readLock(file);
    if (!existing) continue; // released meanwhile: try again
    const other = existing.holder;
    if (other === undefined) {
      if (Date.now() - existing.mtimeMs < WRITING_GRACE_MS)
        throw new DataDirLockedError(dataDir, undefined);
    } else if (other.pid !== process.pid && isAlive(other.pid)) {
      throw new DataDirLockedError(dataDir, other);
    }
    // Stale: remove it, unless another process replaced it since we read it.
    if (readLock(file)?.raw === existing.raw) unlinkQuietly(file);
  }
  throw new Error(`could not lock the data directory ${dataDir}: its lock keeps changing`);
}

/** `process.kill(pid, 0)`: alive unless ESRCH; a zombie (exited, not yet reaped) is dead. */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/s.test(stat);
  } catch {
    return true; // no /proc (macOS): kill(0) is all we know
  }
}

function createExclusive(file: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return true;
}

function readLock(
  file: string,
): { raw: string; holder: DataDirHolder | undefined; mtimeMs: number } | undefined {
  try {
    const mtimeMs = statSync(file).mtimeMs;
    const raw = readFileSync(file, 'utf8');
    return { raw, holder: parseHolder(raw), mtimeMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function parseHolder(raw: string): DataDirHolder | undefined {
  try {
    const value = JSON.parse(raw) as Partial<DataDirHolder> | null;
    if (!value || !Number.isInteger(value.pid) || (value.pid as number) <= 0) return undefined;
    return {
      pid: value.pid as number,
      port: Number.isInteger(value.port) ? (value.port as number) : null,
      url: typeof value.url === 'string' ? value.url : null,
      startedAt: typeof value.startedAt === 'string' ? value.startedAt : '?',
    };
  } catch {
    return undefined;
  }
}

function register(file: string, holder: DataDirHolder): DataDirLock {
  held.set(file, holder);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const [lockFile, owner] of held) releaseFile(lockFile, owner);
    });
  }
  return {
    file,
    advertise(url) {
      if (held.get(file) !== holder) return;
      holder.url = url;
      const port = Number(new URL(url).port);
      holder.port = Number.isInteger(port) && port > 0 ? port : null;
      // Write beside, then rename over: a reader never sees a half-written lock.
      const next = `${file}.${process.pid}.tmp`;
      const fd = openSync(next, 'w', 0o600);
      try {
        writeSync(fd, JSON.stringify(holder));
      } finally {
        closeSync(fd);
      }
      renameSync(next, file);
    },
    release() {
      if (held.get(file) !== holder) return;
      held.delete(file);
      releaseFile(file, holder);
    },
  };
}

/** Removes the lock file when it still names this holder. */
function releaseFile(file: string, holder: DataDirHolder): void {
  try {
    const current = parseHolder(readFileSync(file, 'utf8'));
    if (current?.pid === holder.pid && current.startedAt === holder.startedAt) unlinkSync(file);
  } catch {
    // Already gone, or the directory was removed: nothing to release.
  }
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
