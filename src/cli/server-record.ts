/**
 * The per-user record of running servers, so a command run from any folder finds the server
 * and its store. `rotscope serve` writes `$XDG_STATE_HOME/rotscope/servers/<pid>.json`
 * (default `~/.local/state/rotscope/…`; the folder 0700, the file 0600) once it listens and
 * removes it when it stops cleanly. A record whose process is gone, or whose address does not
 * answer `/healthz` as rotscope (a reused pid), is stale: skipped and removed. A record never
 * holds a secret: the URL, the pid, the embedded data directory (or "postgres", never the
 * database URL) and the start time.
 */
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { processIsAlive, type IsAlive } from '../store/data-dir-lock.ts';

type Env = Record<string, string | undefined>;

export interface ServerRecord {
  pid: number;
  /** The server's base URL as it listens (e.g. `http://127.0.0.1:4318`). */
  url: string;
  /** Absolute path of its embedded data directory; null on PostgreSQL. */
  dataDir: string | null;
  startedAt: string;
}

/** `$XDG_STATE_HOME/rotscope/servers`, else `$HOME/.local/state/rotscope/servers`. */
export function serverRecordDir(env: Env): string {
  const xdg = env.XDG_STATE_HOME;
  const base =
    xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || homedir(), '.local', 'state');
  return path.join(base, 'rotscope', 'servers');
}

/**
 * Writes this server's record (private: 0700 folder, 0600 file, written beside and renamed
 * over) and returns what removes it; removing twice is safe, and a record another process
 * wrote since (the same pid reused) is left alone.
 */
export function writeServerRecord(env: Env, record: ServerRecord): () => void {
  const dir = serverRecordDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const file = path.join(dir, `${record.pid}.json`);
  const text = `${JSON.stringify(record)}\n`;
  const next = `${file}.tmp`;
  writeFileSync(next, text, { mode: 0o600 });
  renameSync(next, file);
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    try {
      if (readFileSync(file, 'utf8') === text) rmSync(file);
    } catch {
      // already gone
    }
  };
}

function parseRecord(text: string): ServerRecord | undefined {
  try {
    const value = JSON.parse(text) as Partial<ServerRecord> | null;
    if (!value || !Number.isInteger(value.pid) || typeof value.url !== 'string') return undefined;
    return {
      pid: value.pid as number,
      url: value.url,
      dataDir: typeof value.dataDir === 'string' ? value.dataDir : null,
      startedAt: typeof value.startedAt === 'string' ? value.startedAt : '?',
    };
  } catch {
    return undefined;
  }
}

/** Whether the server at `url` answers as rotscope; injectable for tests. */
export type Answers = (url: string) => Promise<boolean>;

/** GET /healthz within a second: a live rotscope answers 200. */
export async function answersHealth(url: string): Promise<boolean> {
  try {
    const response = await fetch(new URL('/healthz', url), { signal: AbortSignal.timeout(1_000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * The servers running now, newest first. Records of dead processes, unreadable records and
 * servers that do not answer are removed (a server still starting has written none yet).
 */
export async function runningServers(
  env: Env,
  check: { isAlive?: IsAlive; answers?: Answers } = {},
): Promise<ServerRecord[]> {
  const isAlive = check.isAlive ?? processIsAlive;
  const answers = check.answers ?? answersHealth;
  const dir = serverRecordDir(env);
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => /^\d+\.json$/.test(name));
  } catch {
    return [];
  }
  const live: ServerRecord[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    let record: ServerRecord | undefined;
    try {
      record = parseRecord(readFileSync(file, 'utf8'));
    } catch {
      continue; // removed meanwhile
    }
    if (record && isAlive(record.pid) && (await answers(reachable(record.url)))) live.push(record);
    else rmSync(file, { force: true });
  }
  return live.sort((a, b) => b.startedAt.localeCompare(a.startedAt));
}

/** An unspecified bind address as the loopback address that reaches it. */
export function reachable(url: string): string {
  const parsed = new URL(url);
  if (parsed.hostname === '0.0.0.0') parsed.hostname = '127.0.0.1';
  if (parsed.hostname === '[::]') parsed.hostname = '[::1]';
  return parsed.origin;
}
