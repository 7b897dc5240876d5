/**
 * `rotscope statusline`: the Claude Code status line. Claude Code pipes its status JSON to stdin
 * after each assistant message; this prints one line: repo and git branch, then how full the
 * context window is (`rotscope main · ctx 12% 126k/1M`). `--segment` prints the context part
 * alone (`ctx 12% 126k/1M`), for status lines that compose widgets of their own (ccstatusline's
 * custom command widget) and show the repository and branch already.
 *
 * Derived from durable state: the transcript at `transcript_path` is read from its end (the last
 * main-thread assistant message with a real usage; the status JSON's `context_window` only when
 * the transcript has no usage yet), so a 1 GB transcript costs what a 1 MB one does.
 *
 * It also leaves the window Claude Code itself reports (`model.id`,
 * `context_window.context_window_size`) in a small per-session file (`~/.rotscope/windows/`, mode
 * 0600) when the pair changes; the next hook or guard run sends it to the server (no network here).
 *
 * Synchronous, with no dependency; its one relative import is the dependency-free usage rules
 * (src/model/usage-rules.ts). The build compiles these files alone to CommonJS
 * (tsconfig.statusline.json → dist/cjs/), which bin/rotscope-statusline.cjs loads without
 * Node's ESM loader or the stream modules, so it starts as fast as bare node.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  contextTokensOf,
  DEFAULT_USAGE_BANDS,
  type UsageBands,
  wholePercent,
} from '../model/usage-rules.ts';

type Obj = Record<string, unknown>;

const CHUNK = 64 * 1024;
/** Stop looking back after this much of the transcript (the cost bound on huge files). */
const MAX_SCAN = 8 * 1024 * 1024;
const M1 = 1_000_000;
const K200 = 200_000;

/** `v` when it is a JSON object (not an array), else undefined. */
export const obj = (v: unknown): Obj | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
/** `v` when it is a non-empty string, else undefined. */
export const str = (v: unknown): string | undefined =>
  typeof v === 'string' && v !== '' ? v : undefined;

/** What the transcript's tail says: the context size of the last main-thread call, or a boundary. */
export interface TailUsage {
  tokens: number;
  model: string | null;
}

/**
 * Reads a transcript backwards in chunks and calls `visit` on each complete line, newest first,
 * until it returns something other than undefined (or MAX_SCAN bytes were read).
 */
export function scanBackwards<T>(
  file: string,
  visit: (line: string) => T | undefined,
): T | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fs.fstatSync(fd).size;
    let end = size;
    let carry = Buffer.alloc(0);
    while (end > 0 && size - end < MAX_SCAN) {
      const start = Math.max(0, end - CHUNK);
      const chunk = Buffer.alloc(end - start);
      fs.readSync(fd, chunk, 0, chunk.length, start);
      // Split on bytes, so a multi-byte character cut by the chunk boundary stays whole.
      const bytes = carry.length > 0 ? Buffer.concat([chunk, carry]) : chunk;
      let lineEnd = bytes.length;
      for (let i = bytes.length - 1; i >= 0; i--) {
        if (bytes[i] !== 0x0a) continue;
        const found = visit(bytes.toString('utf8', i + 1, lineEnd));
        if (found !== undefined) return found;
        lineEnd = i;
      }
      carry = bytes.subarray(0, lineEnd);
      if (start === 0) return visit(carry.toString('utf8'));
      end = start;
    }
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The context size of the last main-thread call in a Claude Code transcript: sidechain lines
 * skipped, lines of one message (`message.id`) read once, all-zero usages skipped. Null when the
 * transcript has no usage since its start or since its last compaction boundary.
 */
export function lastUsage(file: string): TailUsage | null {
  const seen = new Set<string>();
  const found = scanBackwards<TailUsage | null>(file, (line) => {
    const boundary = line.includes('"compact_boundary"');
    if (!boundary && (!line.includes('"assistant"') || !line.includes('"usage"'))) return undefined;
    let entry: Obj | undefined;
    try {
      entry = obj(JSON.parse(line));
    } catch {
      return undefined;
    }
    if (!entry || entry.isSidechain === true) return undefined;
    if (entry.type === 'system' && entry.subtype === 'compact_boundary') return null;
    const message = obj(entry.message);
    const usage = obj(message?.usage);
    if (entry.type !== 'assistant' || !message || !usage || message.model === '<synthetic>')
      return undefined;
    const id = str(message.id);
    if (id !== undefined) {
      if (seen.has(id)) return undefined;
      seen.add(id);
    }
    const tokens = contextTokensOf(usage);
    if (tokens === null) {
      // One message's lines share one usage; an all-zero one says nothing: look further back.
      if (id !== undefined) seen.delete(id);
      return undefined;
    }
    return { tokens, model: str(message.model) ?? null };
  });
  return found ?? null;
}

/** What the status line shows. */
export interface Reading {
  tokens: number;
  window: number;
}

/**
 * The window: `1m` in the model id or a 1M window declared by Claude Code → 1M; observed usage
 * above 200k → 1M; else `override` (ROTSCOPE_CONTEXT_WINDOW) or 200k.
 */
export function windowFor(
  model: string | null,
  tokens: number,
  declared: number,
  override: number | null,
): number {
  if (model !== null && /(^|[^a-z0-9])1m([^a-z0-9]|$)/i.test(model)) return M1;
  if (declared >= M1) return declared;
  const base = override ?? K200;
  return tokens > base && tokens > K200 ? Math.max(M1, base) : base;
}

/** The reading for Claude Code's status JSON, or null when nothing says how full it is. */
export function readContext(status: Obj, env: Record<string, string | undefined>): Reading | null {
  const transcript = str(status.transcript_path);
  const tail = transcript === undefined ? null : lastUsage(transcript);
  const windowInfo = obj(status.context_window);
  let tokens = tail?.tokens ?? null;
  if (tokens === null) {
    const current = obj(windowInfo?.current_usage);
    const fromStatus = current ? contextTokensOf(current) : null;
    tokens = fromStatus;
  }
  if (tokens === null) return null;
  const model = str(obj(status.model)?.id) ?? tail?.model ?? null;
  const override = Number(env.ROTSCOPE_CONTEXT_WINDOW);
  return {
    tokens,
    window: windowFor(
      model,
      tokens,
      num(windowInfo?.context_window_size),
      Number.isFinite(override) && override > 0 ? override : null,
    ),
  };
}

/** The window Claude Code reports for a session, as the status line leaves it for the hooks. */
export interface WindowNote {
  sessionId: string;
  model: string;
  window: number;
  /** Set by the hook or guard run that sent it to the server. */
  sent?: boolean;
}

/**
 * Where the status line leaves the window Claude Code reports, one file per session:
 * ROTSCOPE_WINDOWS_DIR, else `~/.rotscope/windows/`.
 */
export function windowNotePath(
  env: Record<string, string | undefined>,
  sessionId: string,
): string | null {
  const home = str(env.HOME);
  const dir =
    str(env.ROTSCOPE_WINDOWS_DIR) ?? (home ? path.join(home, '.rotscope', 'windows') : null);
  return dir === null ? null : path.join(dir, `${sessionId.replace(/[^\w-]/g, '_')}.json`);
}

/** The session's window note, or undefined. */
export function readWindowNote(
  env: Record<string, string | undefined>,
  sessionId: string,
): WindowNote | undefined {
  const file = windowNotePath(env, sessionId);
  if (file === null) return undefined;
  try {
    const note = obj(JSON.parse(fs.readFileSync(file, 'utf8')));
    const model = str(note?.model);
    const window = num(note?.window);
    if (model === undefined || window <= 0) return undefined;
    return { sessionId, model, window, sent: note?.sent === true };
  } catch {
    return undefined;
  }
}

/** Writes the note whole (mode 0600, its folder 0700), then renames it into place. */
export function writeWindowNote(env: Record<string, string | undefined>, note: WindowNote): void {
  const file = windowNotePath(env, note.sessionId);
  if (file === null) return;
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(note), { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/**
 * Leaves the window Claude Code itself reports for this session (`model.id` and
 * `context_window.context_window_size` of the status JSON) where the next hook or guard run sends
 * it to the server (src/cli/hook.ts, ./guard.ts): no network here, and a write only when the pair
 * changed (one small read per render otherwise).
 */
export function noteReportedWindow(status: Obj, env: Record<string, string | undefined>): void {
  const sessionId = str(status.session_id);
  const model = str(obj(status.model)?.id);
  const window = num(obj(status.context_window)?.context_window_size);
  if (sessionId === undefined || model === undefined || !Number.isInteger(window) || window <= 0)
    return;
  const known = readWindowNote(env, sessionId);
  if (known !== undefined && known.model === model && known.window === window) return;
  writeWindowNote(env, { sessionId, model, window });
}

/** Repo name and branch from `.git/HEAD` at `dir` or above (worktrees too); no git process. */
export function gitInfo(dir: string): { repo: string; branch: string } | null {
  let current = path.resolve(dir);
  for (;;) {
    const dotGit = path.join(current, '.git');
    let gitDir: string | null = null;
    try {
      if (fs.statSync(dotGit).isDirectory()) gitDir = dotGit;
      else {
        const pointer = /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(dotGit, 'utf8'));
        if (pointer) gitDir = path.resolve(current, pointer[1]!.trim());
      }
    } catch {
      // no .git here
    }
    if (gitDir !== null) {
      const head = fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8').trim();
      const ref = /^ref:\s*refs\/heads\/(.+)$/.exec(head);
      return { repo: path.basename(current), branch: ref ? ref[1]! : head.slice(0, 7) };
    }
    const parent = path.dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}

/** 126k, 1M, 1.5M, 950. */
/** 126000 → `126k`, 1000000 → `1M`: token counts as the status line writes them. */
export function shortTokens(n: number): string {
  if (n >= M1) return `${Number((n / M1).toFixed(1))}M`;
  if (n >= 1000) return `${Math.round(n / 1000)}k`;
  return String(n);
}

/** The knobs file the hook writes: ROTSCOPE_KNOBS_FILE, else `~/.rotscope/knobs.json`. */
export function knobsPath(env: Record<string, string | undefined>): string | null {
  const home = str(env.HOME);
  return str(env.ROTSCOPE_KNOBS_FILE) ?? (home ? path.join(home, '.rotscope', 'knobs.json') : null);
}

/** The knobs file's content (GET /api/agent-knobs as the hook saved it), or undefined. */
export function readKnobs(env: Record<string, string | undefined>): Obj | undefined {
  const file = knobsPath(env);
  if (file === null) return undefined;
  try {
    return obj(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch {
    return undefined;
  }
}

/** A share of the window (0 < v ≤ 1), or null. */
export const shareOf = (v: unknown): number | null =>
  typeof v === 'number' && v > 0 && v <= 1 ? v : null;

/**
 * The colour bands (dim below dimBelow, plain up to amberFrom: 60–70% is "worth a look", no
 * colour; amber; red): the workspace's, which the SessionStart hook writes to the knobs file,
 * so the line turns amber where the detector fires; the default knobs' bands
 * (src/model/usage-rules.ts) when the file is absent or not sane.
 */
export function readBands(env: Record<string, string | undefined>): Readonly<UsageBands> {
  const bands = obj(readKnobs(env)?.bands);
  const dimBelow = shareOf(bands?.dimBelow);
  const amberFrom = shareOf(bands?.amberFrom);
  const redFrom = shareOf(bands?.redFrom);
  if (dimBelow === null || amberFrom === null || redFrom === null) return DEFAULT_USAGE_BANDS;
  if (!(dimBelow <= amberFrom && amberFrom <= redFrom)) return DEFAULT_USAGE_BANDS;
  return { dimBelow, amberFrom, redFrom };
}

/** The line: `repo branch · ctx 12% 126k/1M`, coloured by state unless NO_COLOR is set. */
export function formatStatusLine(
  git: { repo: string; branch: string } | null,
  reading: Reading | null,
  color: boolean,
  bands: Readonly<UsageBands> = DEFAULT_USAGE_BANDS,
): string {
  const where = git ? `${git.repo} ${git.branch} · ` : '';
  if (!reading) return `${where}ctx –`;
  const share = reading.tokens / reading.window;
  // the percent as the findings and the console write it (src/model/usage-rules.ts)
  let text = `ctx ${wholePercent(share)}% ${shortTokens(reading.tokens)}/${shortTokens(reading.window)}`;
  let style = '';
  if (share >= bands.redFrom) {
    text += ' ⚠ wrap up';
    style = '\x1b[31m';
  } else if (share >= bands.amberFrom) style = '\x1b[33m';
  else if (share < bands.dimBelow) style = '\x1b[2m';
  return `${where}${color && style ? `${style}${text}\x1b[0m` : text}`;
}

/** The command's options, as read from its arguments by {@link statuslineArgs}. */
export interface StatuslineOptions {
  /** Only the context part: no repository, no branch (and no look for .git). */
  segment: boolean;
}

/**
 * The options in the command's arguments (after `statusline`), or the reason they are not
 * ones it takes. Only `--segment` is.
 */
export function statuslineArgs(
  args: readonly string[],
): { ok: true; options: StatuslineOptions } | { ok: false; reason: string } {
  let segment = false;
  for (const arg of args) {
    if (arg === '--segment') segment = true;
    else
      return {
        ok: false,
        reason: `unknown argument "${arg}" (statusline takes --segment, or nothing)`,
      };
  }
  return { ok: true, options: { segment } };
}

/**
 * The whole command: the status JSON in, one line out. Never throws: any error (bad JSON, an
 * unreadable .git) prints an empty line. Exit code 0. With `segment`, the line is the context
 * part alone.
 */
export function statuslineCommand(
  stdin: string,
  io: { stdout: (text: string) => void },
  env: Record<string, string | undefined>,
  options: StatuslineOptions = { segment: false },
): number {
  let line = '';
  try {
    const status = obj(JSON.parse(stdin));
    if (status) {
      const workspace = obj(status.workspace);
      const dir = str(workspace?.current_dir) ?? str(status.cwd) ?? str(workspace?.project_dir);
      const color = env.NO_COLOR === undefined || env.NO_COLOR === '';
      const reading = readContext(status, env);
      try {
        noteReportedWindow(status, env);
      } catch {
        // the line matters more than the note: the next render tries again
      }
      line = formatStatusLine(
        dir && !options.segment ? gitInfo(dir) : null,
        reading,
        color,
        reading ? readBands(env) : DEFAULT_USAGE_BANDS,
      );
    }
  } catch {
    line = '';
  }
  io.stdout(`${line}\n`);
  return 0;
}

/** All of stdin, read with fs.readSync (no stream modules); '' from a terminal. */
export function readStdinSync(): string {
  try {
    if (fs.fstatSync(0).isCharacterDevice()) return '';
  } catch {
    return '';
  }
  const chunks: Buffer[] = [];
  const buffer = Buffer.alloc(CHUNK);
  for (let tries = 0; tries < 2000;) {
    let n: number;
    try {
      n = fs.readSync(0, buffer, 0, buffer.length, null);
    } catch (error) {
      if ((error as { code?: string }).code !== 'EAGAIN') break;
      tries++;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1); // a non-blocking pipe: wait 1 ms
      continue;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, n)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The fast entry (bin/rotscope-statusline.cjs, and `rotscope statusline` from dist/): `args` are
 * the command's arguments. An argument it does not take is said on stderr with exit code 2 and
 * an empty line (a status line prints a line, never a trace).
 */
export function main(args: readonly string[] = []): number {
  const stdout = (text: string) => void fs.writeSync(1, text);
  const parsed = statuslineArgs(args);
  if (!parsed.ok) {
    fs.writeSync(2, `rotscope statusline: ${parsed.reason}\n`);
    stdout('\n');
    return 2;
  }
  return statuslineCommand(readStdinSync(), { stdout }, process.env, parsed.options);
}
