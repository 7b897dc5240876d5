/**
 * `rotscope hook`: Claude Code's compaction hooks (JSON on stdin, conventions §5.4); its
 * PreToolUse and PostToolUse calls go to the tool-result guard (./guard.ts).
 *
 * - `PreCompact` appends one line to the compaction log (ROTSCOPE_COMPACTION_LOG, default
 *   `~/.rotscope/compactions.log`):
 *   `2026-09-04 03:07:33  trigger=auto  tokens=807,693  transcript=566.5MB  session=80 days`
 *   (tokens from the transcript's tail, the session's age from its head), and shows it in the
 *   tmux status bar when run inside tmux (`$TMUX`).
 * - With a rotscope server configured (ROTSCOPE_URL, ROTSCOPE_TOKEN), `SessionStart` with
 *   `source=compact` or `PostCompact` sends one compaction span over OTLP/HTTP JSON:
 *   `gen_ai.operation.name=compaction`, `session.id` (the conversation), trigger, tokens before
 *   and after, the summary's size, and its text only when ROTSCOPE_CAPTURE_CONTENT=1. Both hooks
 *   derive the same span id from the compaction, so the server stores it once. A server that is
 *   down costs at most 1 s: the span then waits in `unsent/` beside the log and goes with the
 *   next hook run that reaches the server (oldest first, at most a week old), never dropped
 *   silently. PreCompact's `pending/` notes are removed once they are a day old.
 * - With a server configured, `SessionStart` of any other source (startup, resume, clear) sends one
 *   `rotscope.session` span: `session.id` and the working directory (`process.working_directory`
 *   on its resource, as on the compaction span), so the console shows where the conversation runs.
 *   Same bound and same `unsent/` rule as the compaction span.
 * - With a server configured, every `SessionStart` also fetches the workspace's knobs
 *   (`GET /api/agent-knobs`, in the same second) into the knobs file (`~/.rotscope/knobs.json`,
 *   ROTSCOPE_KNOBS_FILE): the status line's colours and the guard's budget then follow the
 *   detectors' knobs. A server that does not answer leaves the last file in place.
 *
 * - With a server configured, every run sends the window Claude Code reported for the session
 *   (the status line's note, ./statusline.ts: `model.id` and `context_window.context_window_size`)
 *   as one `rotscope.window` span, once per pair (the guard does the same on tool calls).
 *
 * It never blocks compaction: the exit code is always 0, and every error is written to the log.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { plural } from '../model/plural.ts';
import { guardCommand, windowSpan } from './guard.ts';
import { knobsPath, lastUsage, readWindowNote, writeWindowNote } from './statusline.ts';
import { tokenOf } from './token-file.ts';

type Env = Record<string, string | undefined>;
type Obj = Record<string, unknown>;

/** How long the server may take (ms) before the hook gives up. */
const SERVER_TIMEOUT_MS = 1000;
/** How much of the transcript's head and tail is read for the session's start and the boundary. */
const HEAD_BYTES = 64 * 1024;
const TAIL_BYTES = 2 * 1024 * 1024;

const obj = (v: unknown): Obj | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const int = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) ? Math.round(v) : null;

/** The compaction log's path. */
export function compactionLogPath(env: Env): string {
  return (
    str(env.ROTSCOPE_COMPACTION_LOG) ??
    path.join(str(env.HOME) ?? homedir(), '.rotscope', 'compactions.log')
  );
}

/** `2026-09-04 03:07:33`, local time. */
export function logTimestamp(date: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())} ${p(date.getHours())}:${p(date.getMinutes())}:${p(date.getSeconds())}`;
}

/** 566.5MB, 12.0KB, 1.2GB (binary units). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes}B` : `${value.toFixed(1)}${units[unit]}`;
}

/** 80 days, 1 day, 5 hours, 12 min, 30 s. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s >= 86_400) return plural(Math.floor(s / 86_400), 'day');
  if (s >= 3600) return plural(Math.floor(s / 3600), 'hour');
  if (s >= 60) return `${Math.floor(s / 60)} min`;
  return `${s} s`;
}

/** Bytes [start, start+length) of a file, as complete lines (the cut first or last line dropped). */
function readLines(
  file: string,
  from: 'head' | 'tail',
  length: number,
): { lines: string[]; size: number } {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const start = from === 'head' ? 0 : Math.max(0, size - length);
    const buffer = Buffer.alloc(Math.min(length, size - start));
    readSync(fd, buffer, 0, buffer.length, start);
    const lines = buffer.toString('utf8').split('\n');
    if (from === 'head' && start + buffer.length < size) lines.pop();
    if (from === 'tail' && start > 0) lines.shift();
    return { lines, size };
  } finally {
    closeSync(fd);
  }
}

function parse(line: string): Obj | undefined {
  try {
    return obj(JSON.parse(line));
  } catch {
    return undefined;
  }
}

/** When the session began: the first timestamp in the transcript's head. */
function sessionStart(transcript: string): Date | null {
  for (const line of readLines(transcript, 'head', HEAD_BYTES).lines) {
    const ts = str(parse(line)?.timestamp);
    if (ts !== undefined && !Number.isNaN(Date.parse(ts))) return new Date(ts);
  }
  return null;
}

/** The last compaction written in the transcript's tail: its boundary and summary. */
interface Boundary {
  uuid: string | null;
  trigger: string | null;
  preTokens: number | null;
  postTokens: number | null;
  summary: string | null;
}

function lastBoundary(transcript: string): Boundary | null {
  const { lines } = readLines(transcript, 'tail', TAIL_BYTES);
  let found: Boundary | null = null;
  for (const line of lines) {
    if (line.includes('"compact_boundary"')) {
      const entry = parse(line);
      if (entry?.subtype !== 'compact_boundary' || entry.isSidechain === true) continue;
      const meta = obj(entry.compactMetadata);
      found = {
        uuid: str(entry.uuid) ?? null,
        trigger: str(meta?.trigger) ?? null,
        preTokens: int(meta?.preTokens),
        postTokens: int(meta?.postTokens),
        summary: null,
      };
    } else if (found && found.summary === null && line.includes('"isCompactSummary"')) {
      const content = obj(parse(line)?.message)?.content;
      found.summary =
        typeof content === 'string'
          ? content
          : Array.isArray(content)
            ? content.map((part) => str(obj(part)?.text) ?? '').join('')
            : null;
    }
  }
  return found;
}

/** What PreCompact leaves for the hook that runs after the compaction. */
interface Pending {
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

/** Removes pending notes older than a day. */
function cleanPending(logPath: string, nowMs: number): void {
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
async function sendUnsent(
  logPath: string,
  env: Env,
  log: (text: string) => void,
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

/** The span id of a span body made by {@link hookSpanBody}. */
function spanIdOf(body: unknown): string {
  const span = (
    body as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ spanId: string }> }> }> }
  ).resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
  return span.spanId;
}

/** Shows `text` in the tmux status bar; spawns tmux only inside tmux. Resolves with an error text or null. */
function tmuxMessage(text: string, env: Env): Promise<string | null> {
  if (!str(env.TMUX)) return Promise.resolve(null);
  return new Promise((resolve) =>
    execFile('tmux', ['display-message', text], { timeout: SERVER_TIMEOUT_MS }, (error) =>
      resolve(error ? `tmux display-message failed: ${error.message}` : null),
    ),
  );
}

const hex = (text: string, length: number) =>
  createHash('sha256').update(text).digest('hex').slice(0, length);

/** The compaction span as OTLP/HTTP JSON (DESIGN §5: role compaction, session.id as conversation). */
export function compactionSpan(c: {
  sessionId: string;
  key: string;
  startMs: number;
  endMs: number;
  trigger: string | null;
  tokensBefore: number | null;
  tokensAfter: number | null;
  summary: string | null;
  captureContent: boolean;
  cwd?: string | undefined;
}): unknown {
  const attributes: Array<{ key: string; value: Obj }> = [
    { key: 'gen_ai.operation.name', value: { stringValue: 'compaction' } },
    { key: 'session.id', value: { stringValue: c.sessionId } },
  ];
  const add = (key: string, value: string | number | null) => {
    if (value === null) return;
    attributes.push({
      key,
      value: typeof value === 'number' ? { intValue: String(value) } : { stringValue: value },
    });
  };
  add('rotscope.compaction.trigger', c.trigger);
  add('rotscope.compaction.tokens_before', c.tokensBefore);
  add('rotscope.compaction.tokens_after', c.tokensAfter);
  add('rotscope.compaction.summary_size', c.summary === null ? null : c.summary.length);
  if (c.captureContent) add('rotscope.compaction.summary', c.summary);
  return hookSpanBody({
    sessionId: c.sessionId,
    spanId: hex(`compaction:${c.sessionId}:${c.key}`, 16),
    name: 'rotscope.compaction',
    startMs: c.startMs,
    endMs: c.endMs,
    attributes,
    cwd: c.cwd,
  });
}

/** The session span (src/ingest/projects.ts): where the session runs, nothing else. */
export function sessionSpan(c: { sessionId: string; cwd: string; atMs: number }): unknown {
  return hookSpanBody({
    sessionId: c.sessionId,
    // one per session and directory: a resumed session sends the same span again, stored once
    spanId: hex(`session:${c.sessionId}:${c.cwd}`, 16),
    name: 'rotscope.session',
    startMs: c.atMs,
    endMs: c.atMs,
    attributes: [{ key: 'session.id', value: { stringValue: c.sessionId } }],
    cwd: c.cwd,
  });
}

/** One span of the hook's as OTLP/HTTP JSON: Claude Code's service, its session's trace. */
function hookSpanBody(s: {
  sessionId: string;
  spanId: string;
  name: string;
  startMs: number;
  endMs: number;
  attributes: Array<{ key: string; value: Obj }>;
  cwd: string | undefined;
}): unknown {
  const ns = (ms: number) => `${BigInt(Math.round(ms)) * 1_000_000n}`;
  const resource = [{ key: 'service.name', value: { stringValue: 'claude-code' } }];
  if (s.cwd !== undefined)
    resource.push({ key: 'process.working_directory', value: { stringValue: s.cwd } });
  return {
    resourceSpans: [
      {
        resource: { attributes: resource },
        scopeSpans: [
          {
            scope: { name: 'rotscope-hook' },
            spans: [
              {
                traceId: hex(`session:${s.sessionId}`, 32),
                spanId: s.spanId,
                name: s.name,
                kind: 1,
                startTimeUnixNano: ns(s.startMs),
                endTimeUnixNano: ns(s.endMs),
                attributes: s.attributes,
              },
            ],
          },
        ],
      },
    ],
  };
}

/** `path` on the server of ROTSCOPE_URL (set: the callers check). */
const serverUrl = (env: Env, path: string) =>
  `${str(env.ROTSCOPE_URL)!.replace(/\/+$/, '')}${path}`;

/** POSTs the span to `${ROTSCOPE_URL}/v1/traces`; an error text on failure, else null. */
async function sendSpan(body: unknown, env: Env): Promise<string | null> {
  const url = serverUrl(env, '/v1/traces');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const token = tokenOf(env);
  if (token) headers.authorization = `Bearer ${token}`;
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(SERVER_TIMEOUT_MS),
    });
    if (response.ok) return null;
    return `${url} answered ${response.status}: ${(await response.text()).slice(0, 200)}`;
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    return `${url} unreachable: ${(error as Error).message}${cause ? ` (${cause})` : ''}`;
  }
}

/** PreCompact: the log line (and tmux), and what the post-compaction hook needs. */
async function preCompact(input: Obj, env: Env, log: (text: string) => void, now: Date) {
  const transcript = str(input.transcript_path);
  const trigger = str(input.trigger) ?? 'unknown';
  let tokens: number | null = null;
  let size: number | null = null;
  let started: Date | null = null;
  if (transcript !== undefined) {
    try {
      tokens = lastUsage(transcript)?.tokens ?? null;
      size = readLines(transcript, 'head', 0).size;
      started = sessionStart(transcript);
    } catch (error) {
      log(`error=PreCompact: cannot read ${transcript}: ${(error as Error).message}`);
    }
  }
  const line = [
    `trigger=${trigger}`,
    `tokens=${tokens === null ? 'unknown' : tokens.toLocaleString('en-US')}`,
    `transcript=${size === null ? 'unknown' : formatBytes(size)}`,
    `session=${started === null ? 'unknown' : formatAge(now.getTime() - started.getTime())}`,
  ].join('  ');
  log(line);
  const tmuxError = await tmuxMessage(`rotscope: compaction ${line}`, env);
  if (tmuxError) log(`error=${tmuxError}`);
  const sessionId = str(input.session_id);
  if (str(env.ROTSCOPE_URL) && sessionId !== undefined) {
    const pending: Pending = { trigger, tokensBefore: tokens, atMs: now.getTime() };
    const file = pendingPath(compactionLogPath(env), sessionId);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(pending));
  }
}

/** SessionStart(source=compact) / PostCompact: the compaction span to the server. */
async function afterCompact(input: Obj, env: Env, log: (text: string) => void, now: Date) {
  const sessionId = str(input.session_id);
  if (!str(env.ROTSCOPE_URL) || sessionId === undefined) return;
  const file = pendingPath(compactionLogPath(env), sessionId);
  let pending: Pending | null = null;
  try {
    pending = JSON.parse(readFileSync(file, 'utf8')) as Pending;
  } catch {
    pending = null; // PreCompact not installed or already consumed: the transcript tells the rest
  }
  const transcript = str(input.transcript_path);
  const boundary = transcript === undefined ? null : lastBoundary(transcript);
  const summary = str(input.compact_summary) ?? boundary?.summary ?? null;
  const body = compactionSpan({
    sessionId,
    key: boundary?.uuid ?? String(pending?.atMs ?? now.getTime()),
    startMs: pending?.atMs ?? now.getTime(),
    endMs: now.getTime(),
    trigger: pending?.trigger ?? str(input.trigger) ?? boundary?.trigger ?? null,
    tokensBefore: pending?.tokensBefore ?? boundary?.preTokens ?? null,
    tokensAfter: boundary?.postTokens ?? null,
    summary,
    captureContent: env.ROTSCOPE_CAPTURE_CONTENT === '1',
    cwd: str(input.cwd),
  });
  await sendOrKeep(body, 'compaction', sessionId, env, log);
  // The pending file stays: PostCompact and SessionStart(compact) both run and must send the
  // same span (same id); the next PreCompact overwrites it.
}

/** SessionStart (startup, resume, clear): where the session runs, to the server. */
async function sessionStarted(input: Obj, env: Env, log: (text: string) => void, now: Date) {
  const sessionId = str(input.session_id);
  const cwd = str(input.cwd);
  if (!str(env.ROTSCOPE_URL) || sessionId === undefined || cwd === undefined) return;
  await sendOrKeep(
    sessionSpan({ sessionId, cwd, atMs: now.getTime() }),
    'session',
    sessionId,
    env,
    log,
  );
}

/**
 * The window Claude Code reported for the session (the status line's note, ./statusline.ts) to
 * the server, once: marked sent when the server took it, else left for the next hook or guard run.
 */
async function sendWindow(input: Obj, env: Env, log: (text: string) => void, now: Date) {
  const sessionId = str(input.session_id);
  if (!str(env.ROTSCOPE_URL) || sessionId === undefined) return;
  const note = readWindowNote(env, sessionId);
  if (note === undefined || note.sent) return;
  const error = await sendSpan(windowSpan(note, now), env);
  if (error !== null) {
    log(`error=window span not sent (kept for the next run): ${error}  session_id=${sessionId}`);
    return;
  }
  // the status line may have left another pair meanwhile: that one is still to send
  const still = readWindowNote(env, sessionId);
  if (still?.model === note.model && still.window === note.window)
    writeWindowNote(env, { ...note, sent: true });
}

/** Sends a span; one the server did not take waits in `unsent/` for the next run. */
async function sendOrKeep(
  body: unknown,
  what: string,
  sessionId: string,
  env: Env,
  log: (text: string) => void,
): Promise<void> {
  const error = await sendSpan(body, env);
  if (error === null) return;
  keepUnsent(compactionLogPath(env), spanIdOf(body), body);
  log(`error=${what} span not sent (kept for the next run): ${error}  session_id=${sessionId}`);
}

/**
 * The whole command. Always returns 0 (a hook must never block compaction); what goes wrong is
 * appended to the compaction log, and to stderr only when the log itself cannot be written.
 */
export async function hookCommand(
  stdin: string,
  io: { stderr: (text: string) => void; stdout?: (text: string) => void },
  env: Env,
  now: () => Date = () => new Date(),
): Promise<number> {
  // Tool calls go to the guard (src/cli/guard.ts), which answers on stdout and never throws.
  if (/"hook_event_name"\s*:\s*"(PreToolUse|PostToolUse)"/.test(stdin)) {
    const out = guardCommand(stdin, env, now());
    if (out !== '') io.stdout?.(out);
    return 0;
  }
  const logPath = compactionLogPath(env);
  const log = (text: string) => {
    try {
      mkdirSync(path.dirname(logPath), { recursive: true });
      appendFileSync(logPath, `${logTimestamp(now())}  ${text}\n`);
    } catch (error) {
      io.stderr(`rotscope hook: cannot write ${logPath}: ${(error as Error).message}\n${text}\n`);
    }
  };
  let event = 'unknown';
  try {
    const input = obj(JSON.parse(stdin));
    if (!input) throw new Error('hook input is not a JSON object');
    event = str(input.hook_event_name) ?? 'unknown';
    cleanPending(logPath, now().getTime());
    if (str(env.ROTSCOPE_URL)) await sendUnsent(logPath, env, log, now().getTime());
    if (event === 'PreCompact') await preCompact(input, env, log, now());
    else if (event === 'PostCompact') await afterCompact(input, env, log, now());
    else if (event === 'SessionStart')
      await withKnobs(
        env,
        log,
        input.source === 'compact'
          ? afterCompact(input, env, log, now())
          : sessionStarted(input, env, log, now()),
      );
    await sendWindow(input, env, log, now());
  } catch (error) {
    log(`error=${event}: ${(error as Error).message}`);
  }
  return 0;
}

/** Runs the SessionStart work with the knobs fetch beside it: both within the one bound. */
async function withKnobs(env: Env, log: (text: string) => void, work: Promise<void>) {
  if (!str(env.ROTSCOPE_URL)) return work;
  await Promise.all([work, saveKnobs(env, log)]);
}

/** The workspace's knobs (GET /api/agent-knobs) into the knobs file; errors go to the log. */
async function saveKnobs(env: Env, log: (text: string) => void): Promise<void> {
  const file = knobsPath(env);
  if (file === null) return;
  const url = serverUrl(env, '/api/agent-knobs');
  const token = tokenOf(env);
  try {
    const response = await fetch(url, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(SERVER_TIMEOUT_MS),
    });
    if (!response.ok) {
      log(`error=knobs not fetched: ${url} answered ${response.status}`);
      return;
    }
    const knobs = obj(await response.json());
    if (!knobs || !obj(knobs.bands)) throw new Error(`${url} sent no bands`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(`${file}.tmp`, `${JSON.stringify({ ...knobs, url }, null, 2)}\n`);
    renameSync(`${file}.tmp`, file);
  } catch (error) {
    log(`error=knobs not fetched: ${url}: ${(error as Error).message}`);
  }
}
