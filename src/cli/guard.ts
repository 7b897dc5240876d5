/**
 * The tool-result guard: Claude Code's `PreToolUse` and `PostToolUse` hooks (conventions §5.4),
 * run on every tool call by bin/rotscope-guard.cjs (and by `rotscope hook`). It keeps one tool's
 * result from taking over the context before the tool_takeover detector would have to say so:
 *
 * - Budget: one tool result may hold `toolShare` (the tool_takeover knob, default 0.3) of the
 *   session's window (from the transcript's last model and usage, as the status line reads them),
 *   or the tool's own budget in the guard's config (tokens; `budgets.Read`, `budgets.Bash`, ...).
 * - Before: a `Read` with no range of a file whose size alone passes the budget is narrowed to
 *   the lines that fit (Claude Code applies `updatedInput`; measured on 2.1.197 and 2.1.332), and
 *   the model is told how to read the rest. Nothing else is changed before it runs: a shell
 *   command is never guessed at.
 * - After: a result over its budget gets a short message to the model (write it to a file and
 *   read or search the parts you need). The result itself is never altered or dropped.
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
  readStdinSync,
  readWindowNote,
  shareOf,
  shortTokens,
  windowFor,
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
   * Share of the window one result may hold: the file's, else the workspace's toolShare (the
   * knobs file), else the detector's default 0.3.
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
  /** "30% of the 200k window" or "the guard's budget for Read". */
  because: string;
}

export function budgetFor(
  tool: string,
  config: GuardConfig,
  transcript: string | undefined,
): Budget {
  const own = config.budgets[tool];
  if (own !== undefined) return { tokens: own, because: `the guard's budget for ${tool}` };
  const tail = transcript === undefined ? null : lastUsage(transcript);
  const window = tail ? windowFor(tail.model, tail.tokens, 0, null) : DEFAULT_WINDOW;
  return {
    tokens: Math.floor(config.toolShare * window),
    because: `${Math.round(config.toolShare * 100)}% of the ${shortTokens(window)} window`,
  };
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

/**
 * A `Read` without a range of a file over the budget: the lines of its first `budget` tokens.
 * Undefined when the call is not such a Read (a range given, not a file, small enough).
 */
export function narrowRead(input: Obj, budget: Budget): Decision | undefined {
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
  const tokens = Math.ceil(size / BYTES_PER_TOKEN);
  if (tokens <= budget.tokens) return undefined;
  // The lines that fit in the budget's bytes, counted in its first SAMPLE_BYTES at most and
  // extrapolated beyond (a tool call must not pay for reading megabytes).
  const budgetBytes = Math.min(size, budget.tokens * BYTES_PER_TOKEN);
  const head = Buffer.alloc(Math.min(budgetBytes, SAMPLE_BYTES));
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, head, 0, head.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  let newlines = 0;
  for (let at = head.indexOf(0x0a); at !== -1; at = head.indexOf(0x0a, at + 1)) newlines += 1;
  const lines = Math.max(1, Math.floor((newlines * budgetBytes) / head.length));
  const keptOut = Math.max(0, tokens - Math.ceil(budgetBytes / BYTES_PER_TOKEN));
  const name = path.basename(file);
  const message =
    `rotscope guard: ${name} is ${thousands(size / 1024)} KB (about ${thousands(tokens)} tokens), ` +
    `over the budget of ${thousands(budget.tokens)} tokens for one tool result (${budget.because}), ` +
    `so only lines 1-${lines} were read. Read the rest in parts with offset and limit ` +
    `(next: offset ${lines + 1}), or Grep it for what you need, rather than all of it.`;
  return {
    output: {
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
      detail: `${file} lines 1-${lines}`,
    },
  };
}

/** The text a tool result puts into the context, as far as its shape says. */
export function resultBytes(response: unknown): number {
  if (typeof response === 'string') return Buffer.byteLength(response);
  const value = obj(response);
  if (!value) return Array.isArray(response) ? Buffer.byteLength(JSON.stringify(response)) : 0;
  const file = obj(value.file);
  if (file && typeof file.content === 'string') return Buffer.byteLength(file.content);
  if (typeof value.stdout === 'string' || typeof value.stderr === 'string')
    return (
      Buffer.byteLength(String(value.stdout ?? '')) + Buffer.byteLength(String(value.stderr ?? ''))
    );
  if (typeof value.content === 'string') return Buffer.byteLength(value.content);
  return Buffer.byteLength(JSON.stringify(value));
}

/** A result over its budget: the message back to the model. */
export function warnResult(tool: string, response: unknown, budget: Budget): Decision | undefined {
  const tokens = Math.ceil(resultBytes(response) / BYTES_PER_TOKEN);
  if (tokens <= budget.tokens) return undefined;
  const message =
    `rotscope guard: this ${tool} result is about ${thousands(tokens)} tokens, over the budget of ` +
    `${thousands(budget.tokens)} tokens for one tool result (${budget.because}); it stays in the ` +
    'context until a compaction. Next time write output this large to a file ' +
    '(e.g. `command > out.log`) and read or search the parts you need (Grep, Read with offset and limit).';
  return {
    output: { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: message } },
    log: { action: 'warned', tool, tokens, budget: budget.tokens, keptOut: 0, detail: '' },
  };
}

/** The guard's decision for one hook input (PreToolUse or PostToolUse). */
export function decide(input: Obj, config: GuardConfig): Decision {
  if (!config.enabled) return {};
  const tool = str(input.tool_name);
  if (tool === undefined) return {};
  const transcript = str(input.transcript_path);
  const event = input.hook_event_name;
  if (event === 'PreToolUse') {
    if (tool !== 'Read') return {};
    return narrowRead(obj(input.tool_input) ?? {}, budgetFor(tool, config, transcript)) ?? {};
  }
  if (event === 'PostToolUse')
    return warnResult(tool, input.tool_response, budgetFor(tool, config, transcript)) ?? {};
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
    const decision = decide(input, readGuardConfig(env));
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
