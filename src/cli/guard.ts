/**
 * The tool-result guard: Claude Code's `PreToolUse` and `PostToolUse` hooks (conventions §5.4),
 * run on every tool call by bin/rotscope-guard.cjs (and by `rotscope hook`). It keeps one tool's
 * result from taking over the context before the tool_takeover detector would have to say so:
 *
 * - Budget: the detector's own rule (src/detectors/tool-takeover.ts, src/model/held-results.ts):
 *   a tool's results still held in the context, against `toolShare` (default 0.3) of the call's
 *   input. The transcript says both: the input of the session's last call (its usage) and every
 *   result of the tool since the last compaction. A result may bring the tool's held results up
 *   to {@link SHARE_MARGIN} of `toolShare` of the next call's input, no further, so a session the
 *   guard acted on never starts the episode the detector would report. A per-tool budget in the
 *   guard's config (tokens; `budgets.Read`, ...) caps one result further. Without usage in the
 *   transcript yet: `toolShare` of the session's window, for one result.
 * - Before: a `Read` with no range of a file whose size alone passes the budget is narrowed to
 *   the lines that fit (Claude Code applies `updatedInput`; measured on 2.1.197 and 2.1.332), and
 *   the model is told how to read the rest. Nothing else is changed before it runs: a shell
 *   command is never guessed at.
 * - After: a result over its budget gets a short message to the model (write it to a file and
 *   read or search the parts you need). The result itself is never altered or dropped.
 * - The user sees one short line in Claude Code for each decision (the hook's `systemMessage`;
 *   Claude Code 2.1.332 keeps it in the transcript as a `hook_system_message` attachment).
 * - Each decision is one line in the guard's log (ROTSCOPE_GUARD_LOG, default
 *   `~/.rotscope/guard.log`) and, with a server configured (ROTSCOPE_URL), one span
 *   `rotscope.guard` over OTLP/HTTP JSON (at most 1 s). A result within budget writes nothing.
 * - With a server configured, the window Claude Code reported for the session (the status line's
 *   note, ./statusline.ts) goes to the server once as a `rotscope.window` span, from the first
 *   tool call after the status line left it.
 * - Any error lets the call through unchanged: the exit code is always 0.
 *
 * Tokens are estimated as bytes / 4 (what rotscope assumes for sizes without a tokenizer).
 * Synchronous, node built-ins and ./statusline.ts only: compiled with it to CommonJS
 * (tsconfig.statusline.json), so a tool call pays about a bare `node` start (npm run bench -- guard).
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  lastUsage,
  readKnobs,
  scanBackwards,
  readStdinSync,
  readWindowNote,
  shareOf,
  shortTokens,
  writeWindowNote,
  type WindowNote,
} from './statusline.ts';
import { tokenOf } from './token-file.ts';

type Obj = Record<string, unknown>;
type Env = Record<string, string | undefined>;

/** The tool_takeover detector's default `toolShare` (src/model/thresholds.ts). */
export const DEFAULT_TOOL_SHARE = 0.3;
/** The window when the transcript has no usage yet (Claude Code's smallest). */
const DEFAULT_WINDOW = 200_000;
export const BYTES_PER_TOKEN = 4;
/** How much of a file the guard reads to count the lines that fit its budget. */
const SAMPLE_BYTES = 32 * 1024;
/**
 * Claude Code's Read result numbers each line (`12\t` on 2.1.332, `    12\t` before): bytes a
 * line adds to the result beyond the file's own, counted high so a narrowed read stays in.
 */
const LINE_PREFIX_BYTES = 7;
/**
 * The guard keeps a tool's held results under this part of `toolShare` (27% of the input at
 * the default 30%): bytes / 4 is an estimate, and the detector counts the sizes Claude Code
 * logs, not the guard's.
 */
export const SHARE_MARGIN = 0.9;
/**
 * A result under this many tokens is never warned about: too small to change much, and a Read
 * the guard narrowed to its first line is not warned about again after it ran.
 */
const MIN_WARN_TOKENS = 500;

const obj = (v: unknown): Obj | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const positive = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined;

/** The guard's config file (`~/.rotscope/guard.json`, or ROTSCOPE_GUARD_CONFIG). */
export interface GuardConfig {
  /** Off: every call passes, nothing is written. */
  enabled: boolean;
  /**
   * The detector's `toolShare`: the share of a call's input a tool's held results stay under
   * (less {@link SHARE_MARGIN}); the file's, else the workspace's (the knobs file), else the
   * detector's default 0.3.
   */
  toolShare: number;
  /** Per tool: the budget in tokens, instead of toolShare × window. */
  budgets: Record<string, number>;
}

export function guardConfigPath(env: Env): string {
  return (
    str(env.ROTSCOPE_GUARD_CONFIG) ??
    path.join(str(env.HOME) ?? builtin('node:os').homedir(), '.rotscope', 'guard.json')
  );
}

/** The config, with defaults for what is missing; a file that does not parse is reported. */
export function readGuardConfig(env: Env): GuardConfig {
  // The workspace's toolShare (the knobs file the SessionStart hook writes) before the default.
  const workspaceShare = shareOf(readKnobs(env)?.toolShare);
  const config: GuardConfig = {
    enabled: true,
    toolShare: workspaceShare ?? DEFAULT_TOOL_SHARE,
    budgets: {},
  };
  let text: string;
  try {
    text = fs.readFileSync(guardConfigPath(env), 'utf8');
  } catch {
    return config;
  }
  const parsed = obj(JSON.parse(text));
  if (!parsed) throw new Error(`${guardConfigPath(env)} is not a JSON object`);
  if (parsed.enabled === false) config.enabled = false;
  const share = shareOf(parsed.toolShare);
  if (share !== null) config.toolShare = share;
  for (const [tool, budget] of Object.entries(obj(parsed.budgets) ?? {})) {
    const tokens = positive(budget);
    if (tokens !== undefined) config.budgets[tool] = Math.round(tokens);
  }
  return config;
}

/** A tool's budget in tokens, and where it came from (for the message and the log). */
export interface Budget {
  tokens: number;
  /** "Read results hold 12% of the 41k-token input; the takeover share is 30%", or a window's share. */
  because: string;
  /** The detector's rule only: the tool's results held and the input they are a share of. */
  held?: { tokens: number; input: number; share: number };
}

/** What the transcript says the context holds: results by tool_use id, since its last compaction. */
export interface TranscriptHeld {
  /** Each result's tool and estimated tokens, by its tool_use id. */
  results: Map<string, { tool: string; tokens: number }>;
  /** When the last compaction happened (Unix ms); null when none was seen. */
  boundaryMs: number | null;
}

/**
 * The main thread's tool results since its last compaction, read backwards from the transcript's
 * end (at most its last 8 MB, as the status line reads it: a tool call must not pay for a long
 * session's whole file). Tokens are estimated (bytes / 4). Lines that do not parse are passed
 * over; a missing file holds nothing.
 */
export function readTranscriptHeld(file: string): TranscriptHeld {
  const names = new Map<string, string>();
  const bytes = new Map<string, number>();
  let boundaryMs: number | null = null;
  scanBackwards<true>(file, (line) => {
    const boundary = line.includes('"compact_boundary"');
    if (!boundary && !line.includes('"tool_use"') && !line.includes('"tool_result"'))
      return undefined;
    let entry: Obj | undefined;
    try {
      entry = obj(JSON.parse(line));
    } catch {
      return undefined;
    }
    if (!entry || entry.isSidechain === true) return undefined;
    // a compaction emptied what the context held before it: stop there
    if (entry.type === 'system' && entry.subtype === 'compact_boundary') {
      const at = Date.parse(str(entry.timestamp) ?? '');
      boundaryMs = Number.isFinite(at) ? at : null;
      return true;
    }
    const content = obj(entry.message)?.content;
    if (!Array.isArray(content)) return undefined;
    for (const block of content.map(obj)) {
      const id = str(block?.type === 'tool_use' ? block.id : block?.tool_use_id);
      if (id === undefined) continue;
      if (block?.type === 'tool_use') {
        const name = str(block.name);
        if (name !== undefined) names.set(id, name);
      } else if (block?.type === 'tool_result') {
        bytes.set(id, (bytes.get(id) ?? 0) + resultBytes(block.content));
      }
    }
    return undefined;
  });
  const results = new Map<string, { tool: string; tokens: number }>();
  for (const [id, size] of bytes) {
    const tool = names.get(id);
    if (tool !== undefined) results.set(id, { tool, tokens: Math.ceil(size / BYTES_PER_TOKEN) });
  }
  return { results, boundaryMs };
}

/**
 * Each tool's results still held in the session's context (estimated tokens), by tool: the
 * transcript's since its last compaction and the results this guard saw after them that the
 * transcript does not hold yet (Claude Code writes it behind: a Read's result may still be
 * missing at the next tool call). `skip` is a result not to count (PostToolUse: the one being
 * judged).
 */
export function heldInTranscript(
  file: string,
  skip?: string,
  seen: readonly SeenResult[] = [],
): Record<string, number> {
  const { results, boundaryMs } = readTranscriptHeld(file);
  for (const r of seen)
    if (!results.has(r.id) && (boundaryMs === null || r.atMs > boundaryMs))
      results.set(r.id, { tool: r.tool, tokens: r.tokens });
  const held: Record<string, number> = {};
  for (const [id, { tool, tokens }] of results)
    if (id !== skip) held[tool] = (held[tool] ?? 0) + tokens;
  return held;
}

/** A result the guard saw after its tool ran (PostToolUse), kept per session. */
export interface SeenResult {
  id: string;
  tool: string;
  tokens: number;
  atMs: number;
}

/** The most results kept per session (the newest). */
const MAX_SEEN = 200;

/** The file of a session's seen results: beside the guard's log, one per session. */
function seenPath(env: Env, session: string): string {
  return path.join(
    path.dirname(guardLogPath(env)),
    'guard-seen',
    `${session.replace(/[^A-Za-z0-9_-]/g, '_')}.json`,
  );
}

export function readSeen(env: Env, session: string | undefined): SeenResult[] {
  if (session === undefined) return [];
  try {
    const list = JSON.parse(fs.readFileSync(seenPath(env, session), 'utf8')) as unknown;
    return Array.isArray(list) ? (list as SeenResult[]) : [];
  } catch {
    return [];
  }
}

/**
 * Keeps one result the guard saw (PostToolUse). Only results of at least MIN_WARN_TOKENS come
 * here: the pass path of small results reads and writes nothing.
 */
function rememberSeen(env: Env, session: string | undefined, result: SeenResult): void {
  if (session === undefined) return;
  const list = readSeen(env, session).filter((r) => r.id !== result.id);
  list.push(result);
  const file = seenPath(env, session);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (!fs.existsSync(file)) forgetOldSessions(path.dirname(file));
  fs.writeFileSync(file, JSON.stringify(list.slice(-MAX_SEEN)));
}

/**
 * A session's seen results matter only until its transcript catches up (seconds): the files of
 * sessions untouched for a day are removed, when a new session writes its first (one directory
 * read a session, none on the hot path). Best effort: a file that cannot be read or removed stays.
 */
const SEEN_KEEP_MS = 24 * 60 * 60 * 1000;
function forgetOldSessions(dir: string): void {
  const before = Date.now() - SEEN_KEEP_MS;
  for (const name of fs.readdirSync(dir)) {
    if (!name.endsWith('.json')) continue;
    const file = path.join(dir, name);
    try {
      if (fs.statSync(file).mtimeMs < before) fs.rmSync(file, { force: true });
    } catch {
      // another guard removed it meanwhile, or it cannot be read: left as it is
    }
  }
}

/** 0.123 → "12". */
const percent = (share: number) => String(Math.round(share * 100));

/**
 * The tokens one more `tool` result may add: the detector's rule. With `h` the tool's held
 * results, `c` the input of the session's last call and `t` the share to stay under, the next
 * input holds about `c + r`, so `(h + r) / (c + r) < t` gives `r < (t·c − h) / (1 − t)`; never
 * below 0. Without usage in the transcript: `toolShare` of the window, for this result alone.
 */
export function budgetFor(
  tool: string,
  config: GuardConfig,
  transcript: string | undefined,
  skip?: string,
  seen: readonly SeenResult[] = [],
): Budget {
  const own = config.budgets[tool];
  const tail = transcript === undefined ? null : lastUsage(transcript);
  if (tail === null || transcript === undefined) {
    if (own !== undefined) return { tokens: own, because: `the guard's budget for ${tool}` };
    return {
      tokens: Math.floor(config.toolShare * DEFAULT_WINDOW),
      because: `${percent(config.toolShare)}% of the ${shortTokens(DEFAULT_WINDOW)} window`,
    };
  }
  const input = tail.tokens;
  const held = heldInTranscript(transcript, skip, seen)[tool] ?? 0;
  const target = config.toolShare * SHARE_MARGIN;
  const room = Math.max(0, Math.floor((target * input - held) / (1 - target)));
  const share = input > 0 ? held / input : 0;
  const rule =
    `${tool} results hold ${percent(share)}% of the ${shortTokens(input)}-token input; ` +
    `rotscope reports a tool over ${percent(config.toolShare)}%`;
  const heldNote = { tokens: held, input, share };
  if (own !== undefined && own < room)
    return { tokens: own, because: `the guard's budget for ${tool}`, held: heldNote };
  return { tokens: room, because: rule, held: heldNote };
}

/** 12345 → "12,345" (toLocaleString would load ICU: 17 ms of a tool call). */
const thousands = (n: number) => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
/** Built-ins only the rare paths need (a span sent), loaded then and not on every tool call. */
const builtin = <ID extends 'node:child_process' | 'node:crypto' | 'node:os'>(id: ID) =>
  process.getBuiltinModule(id);

/** What the guard decided for one hook call: the hook's answer (or none), and its log entry. */
export interface Decision {
  /** Written to stdout for Claude Code; undefined: nothing (the call passes as it is). */
  output?: Obj;
  log?: {
    action: 'narrowed' | 'warned';
    tool: string;
    /** Estimated tokens of the whole result (narrowed: of the whole file). */
    tokens: number;
    budget: number;
    /** Tokens kept out of the context (narrowed: the rest of the file; warned: 0). */
    keptOut: number;
    detail: string;
  };
}

/** What the next call's input will hold of the tool, after `added` more tokens of it. */
function shareAfter(budget: Budget, added: number): number | null {
  if (!budget.held) return null;
  return (budget.held.tokens + added) / (budget.held.input + added);
}

/**
 * A `Read` without a range of a file over the budget: the lines of its first `budget` tokens
 * (line 1 alone when the tool's results already hold their share). Undefined when the call is
 * not such a Read (a range given, not a file, small enough).
 */
export function narrowRead(input: Obj, budgetOf: Budget | (() => Budget)): Decision | undefined {
  const file = str(input.file_path);
  if (file === undefined || input.limit !== undefined || input.offset !== undefined)
    return undefined;
  let size: number;
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) return undefined;
    size = stat.size;
  } catch {
    return undefined;
  }
  // Lines are counted in the file's first SAMPLE_BYTES at most and extrapolated beyond (a tool
  // call must not pay for reading megabytes); each adds its number to the result.
  const head = Buffer.alloc(Math.min(size, SAMPLE_BYTES));
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, head, 0, head.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  let newlines = 0;
  for (let at = head.indexOf(0x0a); at !== -1; at = head.indexOf(0x0a, at + 1)) newlines += 1;
  // the transcript is read only for a whole-file Read of a file (not for a range, a folder)
  const budget = typeof budgetOf === 'function' ? budgetOf() : budgetOf;
  const lineBytes = head.length / Math.max(1, newlines);
  const perLine = lineBytes + LINE_PREFIX_BYTES;
  const tokens = Math.ceil((size + (size / lineBytes) * LINE_PREFIX_BYTES) / BYTES_PER_TOKEN);
  if (tokens <= budget.tokens) return undefined;
  const lines = Math.max(1, Math.floor((budget.tokens * BYTES_PER_TOKEN) / perLine));
  const readTokens = Math.ceil((lines * perLine) / BYTES_PER_TOKEN);
  const keptOut = Math.max(0, tokens - readTokens);
  const name = path.basename(file);
  const range = lines === 1 ? 'line 1' : `lines 1-${lines}`;
  const message =
    `rotscope guard: ${name} is ${thousands(size / 1024)} KB (about ${thousands(tokens)} tokens), ` +
    `over the budget of ${thousands(budget.tokens)} tokens for one tool result (${budget.because}), ` +
    `so only ${range} ${lines === 1 ? 'was' : 'were'} read. Read the rest in parts with offset and limit ` +
    `(next: offset ${lines + 1}), or Grep it for what you need, rather than all of it.`;
  const after = shareAfter(budget, readTokens);
  const user =
    `rotscope guard: read ${range} of ${name} (about ${thousands(keptOut)} tokens kept out` +
    (after === null ? ')' : `; Read results at ${percent(after)}% of the context)`);
  return {
    output: {
      systemMessage: user,
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        updatedInput: { ...input, offset: 1, limit: lines },
        additionalContext: message,
      },
    },
    log: {
      action: 'narrowed',
      tool: 'Read',
      tokens,
      budget: budget.tokens,
      keptOut,
      detail: `${file} ${range}`,
    },
  };
}

/** The text a tool result puts into the context, as far as its shape says. */
export function resultBytes(response: unknown): number {
  if (typeof response === 'string') return Buffer.byteLength(response);
  if (Array.isArray(response))
    // content blocks (a transcript's tool_result, an MCP result): their text, else the JSON
    return response.reduce<number>((sum, block) => {
      const text = obj(block)?.text;
      return (
        sum + Buffer.byteLength(typeof text === 'string' ? text : (JSON.stringify(block) ?? ''))
      );
    }, 0);
  const value = obj(response);
  if (!value) return 0;
  const file = obj(value.file);
  if (file && typeof file.content === 'string') return Buffer.byteLength(file.content);
  if (typeof value.stdout === 'string' || typeof value.stderr === 'string')
    return (
      Buffer.byteLength(String(value.stdout ?? '')) + Buffer.byteLength(String(value.stderr ?? ''))
    );
  if (typeof value.content === 'string') return Buffer.byteLength(value.content);
  return Buffer.byteLength(JSON.stringify(value));
}

/** A result over its budget: the message back to the model, and a line to the user. */
export function warnResult(tool: string, response: unknown, budget: Budget): Decision | undefined {
  const tokens = Math.ceil(resultBytes(response) / BYTES_PER_TOKEN);
  if (tokens <= budget.tokens || tokens < MIN_WARN_TOKENS) return undefined;
  const message =
    `rotscope guard: this ${tool} result is about ${thousands(tokens)} tokens, over the budget of ` +
    `${thousands(budget.tokens)} tokens for one tool result (${budget.because}); it stays in the ` +
    'context until a compaction. Next time write output this large to a file ' +
    '(e.g. `command > out.log`) and read or search the parts you need (Grep, Read with offset and limit).';
  const after = shareAfter(budget, tokens);
  const user =
    `rotscope guard: a ${tool} result of about ${thousands(tokens)} tokens` +
    (after === null
      ? ` is over the budget of ${thousands(budget.tokens)}; the model was told`
      : ` brings ${tool} results to ${percent(after)}% of the context; the model was told`);
  return {
    output: {
      systemMessage: user,
      hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: message },
    },
    log: { action: 'warned', tool, tokens, budget: budget.tokens, keptOut: 0, detail: '' },
  };
}

/**
 * The guard's decision for one hook input (PreToolUse or PostToolUse). `env` locates the
 * results it saw in the session (none without it); a PostToolUse result is kept there.
 */
export function decide(input: Obj, config: GuardConfig, env?: Env, now = new Date()): Decision {
  if (!config.enabled) return {};
  const tool = str(input.tool_name);
  if (tool === undefined) return {};
  const transcript = str(input.transcript_path);
  const session = str(input.session_id);
  const seen = () => (env === undefined ? [] : readSeen(env, session));
  const event = input.hook_event_name;
  if (event === 'PreToolUse') {
    if (tool !== 'Read') return {};
    const budget = () => budgetFor(tool, config, transcript, undefined, seen());
    return narrowRead(obj(input.tool_input) ?? {}, budget) ?? {};
  }
  if (event === 'PostToolUse') {
    const tokens = Math.ceil(resultBytes(input.tool_response) / BYTES_PER_TOKEN);
    // a small result passes without reading the transcript (most tool calls)
    if (tokens < MIN_WARN_TOKENS) return {};
    // the result being judged is not counted twice, should the transcript hold it already
    const id = str(input.tool_use_id);
    const decision = warnResult(
      tool,
      input.tool_response,
      budgetFor(tool, config, transcript, id, seen()),
    );
    if (env !== undefined && id !== undefined)
      rememberSeen(env, session, { id, tool, tokens, atMs: now.getTime() });
    return decision ?? {};
  }
  return {};
}

export function guardLogPath(env: Env): string {
  return (
    str(env.ROTSCOPE_GUARD_LOG) ??
    path.join(str(env.HOME) ?? builtin('node:os').homedir(), '.rotscope', 'guard.log')
  );
}

function appendLog(env: Env, line: string): void {
  const file = guardLogPath(env);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.appendFileSync(file, `${line}\n`);
}

function stamp(date: Date): string {
  return date.toISOString().replace('T', ' ').slice(0, 19);
}

/** One line per decision: `2026-12-02 15:04:05  narrowed  Read  tokens=20,480  budget=2,000  kept_out=18,480  session=…  …`. */
export function logLine(decision: NonNullable<Decision['log']>, session: string, at: Date): string {
  return [
    stamp(at),
    decision.action,
    decision.tool,
    `tokens=${thousands(decision.tokens)}`,
    `budget=${thousands(decision.budget)}`,
    `kept_out=${thousands(decision.keptOut)}`,
    `session=${session}`,
    ...(decision.detail ? [decision.detail] : []),
  ].join('  ');
}

/** The decision as one OTLP/JSON span (`rotscope.guard`), for the server's console. */
export function guardSpan(decision: NonNullable<Decision['log']>, session: string, at: Date): Obj {
  const ns = String(BigInt(at.getTime()) * 1_000_000n);
  const attr = (key: string, value: string | number) => ({
    key,
    value: typeof value === 'number' ? { intValue: String(value) } : { stringValue: value },
  });
  return {
    resourceSpans: [
      {
        resource: { attributes: [attr('service.name', 'rotscope-guard')] },
        scopeSpans: [
          {
            scope: { name: 'rotscope.guard' },
            spans: [
              {
                traceId: builtin('node:crypto').randomBytes(16).toString('hex'),
                spanId: builtin('node:crypto').randomBytes(8).toString('hex'),
                name: 'rotscope.guard',
                kind: 1,
                startTimeUnixNano: ns,
                endTimeUnixNano: ns,
                attributes: [
                  attr('session.id', session),
                  attr('rotscope.guard.action', decision.action),
                  attr('rotscope.guard.tool', decision.tool),
                  attr('rotscope.guard.result_tokens', decision.tokens),
                  attr('rotscope.guard.budget_tokens', decision.budget),
                  attr('rotscope.guard.kept_out_tokens', decision.keptOut),
                ],
              },
            ],
          },
        ],
      },
    ],
  };
}

/**
 * The window Claude Code reported for a session (the status line's note, ./statusline.ts) as one
 * OTLP/JSON span `rotscope.window`, which the server stores as the window of the session's calls
 * (src/ingest/agent-windows.ts). Its ids come from the session and the pair: a re-send is
 * stored once.
 */
export function windowSpan(note: WindowNote, at: Date): Obj {
  const ns = String(BigInt(at.getTime()) * 1_000_000n);
  const hash = (text: string, length: number) =>
    builtin('node:crypto').createHash('sha256').update(text).digest('hex').slice(0, length);
  const attr = (key: string, value: string | number) => ({
    key,
    value: typeof value === 'number' ? { intValue: String(value) } : { stringValue: value },
  });
  return {
    resourceSpans: [
      {
        resource: { attributes: [attr('service.name', 'rotscope-statusline')] },
        scopeSpans: [
          {
            scope: { name: 'rotscope.window' },
            spans: [
              {
                traceId: hash(`session:${note.sessionId}`, 32),
                spanId: hash(`window:${note.sessionId}:${note.model}:${note.window}`, 16),
                name: 'rotscope.window',
                kind: 1,
                startTimeUnixNano: ns,
                endTimeUnixNano: ns,
                attributes: [
                  attr('session.id', note.sessionId),
                  attr('rotscope.window.model', note.model),
                  attr('rotscope.window.tokens', note.window),
                  attr('rotscope.window.reporter', 'claude_code.statusline'),
                ],
              },
            ],
          },
        ],
      },
    ],
  };
}

/**
 * Sends the session's window note once, when the status line left a new one (a child `node`
 * posts it, as a decision's span: a tool call pays that only then); marked sent when the server
 * took it, so a server that is away gets it on a later tool call.
 */
export function sendWindowNote(env: Env, sessionId: string, now = new Date()): void {
  if (str(env.ROTSCOPE_URL) === undefined) return;
  const note = readWindowNote(env, sessionId);
  if (note === undefined || note.sent) return;
  if (!sendSpan(env, windowSpan(note, now))) return;
  // the status line may have left another pair meanwhile: that one is still to send
  const still = readWindowNote(env, sessionId);
  if (still?.model === note.model && still.window === note.window)
    writeWindowNote(env, { ...note, sent: true });
}

/**
 * Sends the span with a 1 s bound, synchronously (this process ends right after): a child
 * `node` posts it, so the hook itself loads no HTTP stack. A failure is logged, never raised;
 * true when the server took it.
 */
function sendSpan(env: Env, span: Obj): boolean {
  const url = str(env.ROTSCOPE_URL);
  if (url === undefined) return false;
  const script =
    'const [u,b]=process.argv.slice(1);const t=process.env.ROTSCOPE_SEND_TOKEN;fetch(u,{method:"POST",headers:{"content-type":"application/json",...(t?{authorization:"Bearer "+t}:{})},body:b,signal:AbortSignal.timeout(1000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))';
  const sent = builtin('node:child_process').spawnSync(
    process.execPath,
    ['-e', script, `${url.replace(/\/$/, '')}/v1/traces`, JSON.stringify(span)],
    // the token in the child's environment, not its arguments (which any user's `ps` shows)
    {
      timeout: 2_000,
      stdio: 'ignore',
      env: { ...process.env, ROTSCOPE_SEND_TOKEN: tokenOf(env) ?? '' },
    },
  );
  if (sent.status !== 0) appendLog(env, `${stamp(new Date())}  span not sent to ${url}`);
  return sent.status === 0;
}

/** Runs the guard for one hook input; returns what to print (possibly nothing). Never throws. */
export function guardCommand(stdin: string, env: Env, now = new Date()): string {
  try {
    const input = obj(JSON.parse(stdin));
    if (!input) return '';
    const decision = decide(input, readGuardConfig(env), env, now);
    if (decision.log) {
      const session = str(input.session_id) ?? 'unknown';
      appendLog(env, logLine(decision.log, session, now));
      sendSpan(env, guardSpan(decision.log, session, now));
    }
    const session = str(input.session_id);
    if (session !== undefined) {
      try {
        sendWindowNote(env, session, now);
      } catch {
        // the window goes with a later tool call
      }
    }
    return decision.output ? JSON.stringify(decision.output) : '';
  } catch (error) {
    try {
      appendLog(
        env,
        `${stamp(now)}  error  ${error instanceof Error ? error.message : String(error)}`,
      );
    } catch {
      // nowhere to write: the call passes all the same
    }
    return '';
  }
}

/** The fast entry (bin/rotscope-guard.cjs). */
export function main(): number {
  const out = guardCommand(readStdinSync(), process.env);
  if (out !== '') fs.writeSync(1, out);
  return 0;
}
