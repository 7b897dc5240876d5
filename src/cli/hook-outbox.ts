/**
 * The hook's files beside the compaction log (./hook-log.ts), which carry work from one hook run
 * to a later one: `pending/` (what PreCompact knew before the compaction, for the hooks that run
 * after it; removed once a day old) and `unsent/` (spans the server did not take, sent by the
 * next run that reaches it, oldest first, for at most a week; never dropped silently).
 */
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { compactionLogPath, type Env, type HookLog } from './hook-log.ts';
import { sendSpan, spanIdOf } from './hook-otlp.ts';

/** What PreCompact leaves for the hook that runs after the compaction. */
export interface Pending {
  trigger: string | null;
  tokensBefore: number | null;
  atMs: number;
}

function pendingPath(logPath: string, sessionId: string): string {
  return path.join(path.dirname(logPath), 'pending', `${sessionId.replace(/[^\w-]/g, '_')}.json`);
}

/** A pending note older than this has served both post-compaction hooks: removed. */
const PENDING_MAX_AGE_MS = 24 * 3600_000;
/** An unsent span older than this is given up (logged), and at most this many wait. */
const UNSENT_MAX_AGE_MS = 7 * 24 * 3600_000;
const UNSENT_MAX_FILES = 200;

const unsentDir = (logPath: string) => path.join(path.dirname(logPath), 'unsent');

/** The files of `dir` with their age, oldest first; none when it does not exist. */
function filesByAge(dir: string, nowMs: number): Array<{ file: string; ageMs: number }> {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  const out: Array<{ file: string; ageMs: number }> = [];
  for (const name of names) {
    const file = path.join(dir, name);
    try {
      out.push({ file, ageMs: nowMs - statSync(file).mtimeMs });
    } catch {
      // removed meanwhile by another hook run
    }
  }
  return out.sort((a, b) => b.ageMs - a.ageMs);
}

/** Leaves PreCompact's note for the session's post-compaction hooks. */
export function writePending(env: Env, sessionId: string, pending: Pending): void {
  const file = pendingPath(compactionLogPath(env), sessionId);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(pending));
}

/** PreCompact's note for the session, or null (PreCompact not installed, or the note gone). */
export function readPending(env: Env, sessionId: string): Pending | null {
  try {
    return JSON.parse(
      readFileSync(pendingPath(compactionLogPath(env), sessionId), 'utf8'),
    ) as Pending;
  } catch {
    return null;
  }
}

/** Removes pending notes older than a day. */
export function cleanPending(logPath: string, nowMs: number): void {
  for (const { file, ageMs } of filesByAge(path.join(path.dirname(logPath), 'pending'), nowMs))
    if (ageMs > PENDING_MAX_AGE_MS) rmSync(file, { force: true });
}

/** Keeps a span that could not be sent, for the next hook run (written whole, then renamed). */
function keepUnsent(logPath: string, spanId: string, body: unknown): void {
  const dir = unsentDir(logPath);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${spanId.replace(/[^\w-]/g, '_')}.json`);
  writeFileSync(`${file}.tmp`, JSON.stringify(body));
  renameSync(`${file}.tmp`, file);
}

/**
 * Sends the spans earlier runs could not, oldest first, until one fails (the server is still
 * away: one timeout at most). Spans older than a week, or beyond the newest 200, are given up.
 */
export async function sendUnsent(
  logPath: string,
  env: Env,
  log: HookLog,
  nowMs: number,
): Promise<void> {
  const files = filesByAge(unsentDir(logPath), nowMs);
  for (const [i, { file, ageMs }] of files.entries()) {
    if (ageMs > UNSENT_MAX_AGE_MS || files.length - i > UNSENT_MAX_FILES) {
      rmSync(file, { force: true });
      log(
        `error=span given up after ${Math.round(ageMs / 3600_000)} h unsent: ${path.basename(file)}`,
      );
      continue;
    }
    let body: unknown;
    try {
      body = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      rmSync(file, { force: true });
      continue;
    }
    const error = await sendSpan(body, env);
    if (error) return;
    rmSync(file, { force: true });
    log(`span sent late: ${path.basename(file, '.json')}`);
  }
}

/** Sends a span; one the server did not take waits in `unsent/` for the next run. */
export async function sendOrKeep(
  body: unknown,
  what: string,
  sessionId: string,
  env: Env,
  log: HookLog,
): Promise<void> {
  const error = await sendSpan(body, env);
  if (error === null) return;
  keepUnsent(compactionLogPath(env), spanIdOf(body), body);
  log(`error=${what} span not sent (kept for the next run): ${error}  session_id=${sessionId}`);
}
