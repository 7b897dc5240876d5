/**
 * `rotscope claude-code install [--user|--project] [--url URL] [--token TOKEN]
 * [--keep-statusline] [--no-guard] [--uninstall] [--dry-run]`: adds rotscope's status line, its
 * compaction hooks (PreCompact, PostCompact, SessionStart: compactions and where a session runs), the
 * tool-result guard (PreToolUse with matcher `Read`, PostToolUse; src/cli/guard.ts) and the telemetry
 * settings (`env`: Claude Code's OTLP exporters at the server, with the auth header when a
 * token is given, and `ROTSCOPE_URL` / `ROTSCOPE_TOKEN` for the hook) to Claude Code's
 * settings.json, merged with what is there. User settings live in
 * `$CLAUDE_CONFIG_DIR/settings.json` (default `~/.claude/settings.json`), project settings in
 * `.claude/settings.json` of the current directory. A changed file is backed up first
 * (`settings.json.rotscope-backup-<time>`); what rotscope replaced (a status line of your own,
 * env values it overwrote) is kept in `settings.json.rotscope-replaced.json`, so `--uninstall`
 * removes only rotscope's entries and puts back exactly what was there. Running it twice changes
 * nothing; `--dry-run` prints the diff (and what it would replace) and writes nothing.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  backup,
  DEFAULT_URL,
  fileDiff,
  installFlags,
  obj,
  parseSettingsJson,
  type Env,
  type Io,
  type Obj,
} from './install-shared.ts';

export const CLAUDE_CODE_USAGE =
  'usage: rotscope claude-code install [--user|--project] [--url URL] [--token TOKEN] [--keep-statusline]\n' +
  '                                    [--no-guard] [--uninstall] [--dry-run]\n' +
  '  --url      the rotscope server Claude Code sends to (default $ROTSCOPE_URL, else http://127.0.0.1:4318)\n' +
  '  --token    an ingest token, once the server has tokens (default $ROTSCOPE_TOKEN)\n' +
  "  --keep-statusline  keep a status line of your own instead of rotscope's\n" +
  '  --no-guard         leave out the tool-result guard (PreToolUse/PostToolUse; see README)\n';

/**
 * The `env` entries rotscope writes: Claude Code's telemetry to the server (traces and log
 * events over OTLP/HTTP protobuf; conventions §5.1) and the hook's server.
 */
export function telemetryEnv(url: string, token: string | undefined): Record<string, string> {
  const base = url.replace(/\/+$/, '');
  return {
    CLAUDE_CODE_ENABLE_TELEMETRY: '1',
    CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: '1',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_LOGS_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_EXPORTER_OTLP_ENDPOINT: base,
    ...(token === undefined ? {} : { OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer ${token}` }),
    ROTSCOPE_URL: base,
    ...(token === undefined ? {} : { ROTSCOPE_TOKEN: token }),
  };
}

/** Every `env` key rotscope may write (removed on uninstall when it wrote them). */
const OUR_ENV_KEYS = Object.keys(telemetryEnv(DEFAULT_URL, 'x'));

/** What an install replaced, so that uninstall puts it back. */
interface Replaced {
  /** The status line that was there before rotscope's, if it was not rotscope's own. */
  statusLine?: unknown;
  /** Earlier values of the env keys rotscope set (null: the key was absent). */
  env?: Record<string, string | null>;
}
/** The hook events rotscope listens to, with their matcher. */
const HOOK_EVENTS: ReadonlyArray<[event: string, matcher: string]> = [
  ['PreCompact', ''],
  ['PostCompact', ''],
  ['SessionStart', ''],
];
/**
 * The tool-result guard's hooks (src/cli/guard.ts): before a Read (the only input it narrows)
 * and after every tool. On by default: it is silent below its budget (the tool_takeover
 * detector's own 30% of the window), never blocks or alters a result, and lets every call
 * through on any error; `--no-guard` leaves it out.
 */
const GUARD_EVENTS: ReadonlyArray<[event: string, matcher: string]> = [
  ['PreToolUse', 'Read'],
  ['PostToolUse', ''],
];

/** The commands written into settings.json: this installation's node and bin/, absolute. */
export function rotscopeCommands(): { statusline: string; hook: string; guard: string } {
  const bin = fileURLToPath(new URL('../../bin/', import.meta.url));
  const quote = (s: string) => `"${s.replace(/(["\\$`])/g, '\\$1')}"`;
  return {
    statusline: `${quote(process.execPath)} ${quote(path.join(bin, 'rotscope-statusline.cjs'))}`,
    hook: `${quote(process.execPath)} ${quote(path.join(bin, 'rotscope.js'))} hook`,
    guard: `${quote(process.execPath)} ${quote(path.join(bin, 'rotscope-guard.cjs'))}`,
  };
}

/** True for a command rotscope wrote (its status line or its hook). */
function isOurs(command: unknown): boolean {
  return (
    typeof command === 'string' &&
    (/rotscope-(statusline|guard)\.cjs"?$/.test(command) || /rotscope(\.js"?)? hook$/.test(command))
  );
}

/**
 * settings.json without rotscope's entries (empty hook lists and objects left out), with what
 * its install replaced put back (`replaced`: a status line of the user's, earlier env values).
 */
function withoutOurs(settings: Obj, replaced: Replaced = {}): Obj {
  const next: Obj = { ...settings };
  if (isOurs(obj(next.statusLine)?.command)) {
    delete next.statusLine;
    if (replaced.statusLine !== undefined) next.statusLine = replaced.statusLine;
  }
  const env = obj(next.env);
  if (env !== undefined && replaced.env !== undefined) {
    const left: Obj = { ...env };
    for (const [key, value] of Object.entries(replaced.env)) {
      if (!OUR_ENV_KEYS.includes(key)) continue;
      if (value === null) delete left[key];
      else left[key] = value;
    }
    if (Object.keys(left).length > 0) next.env = left;
    else delete next.env;
  }
  const hooks = obj(next.hooks);
  if (hooks) {
    const kept: Obj = {};
    for (const [event, groups] of Object.entries(hooks)) {
      if (!Array.isArray(groups)) {
        kept[event] = groups;
        continue;
      }
      const left = groups
        .map((group) => {
          const g = obj(group);
          if (!g || !Array.isArray(g.hooks)) return group;
          const inner = g.hooks.filter((h) => !isOurs(obj(h)?.command));
          return inner.length === 0 ? undefined : { ...g, hooks: inner };
        })
        .filter((group) => group !== undefined);
      if (left.length > 0) kept[event] = left;
    }
    if (Object.keys(kept).length > 0) next.hooks = kept;
    else delete next.hooks;
  }
  return next;
}

/**
 * settings.json with rotscope's status line (unless `keepStatusLine` and one of the user's is
 * there), hooks and telemetry env (replacing any earlier ones of ours).
 */
export function withOurs(
  settings: Obj,
  commands = rotscopeCommands(),
  options: { env?: Record<string, string>; keepStatusLine?: boolean; guard?: boolean } = {},
): Obj {
  const next = withoutOurs(settings);
  const own = obj(settings.statusLine);
  if (!(options.keepStatusLine && own !== undefined && !isOurs(own.command)))
    next.statusLine = { type: 'command', command: commands.statusline, padding: 0 };
  if (options.env !== undefined) next.env = { ...obj(next.env), ...options.env };
  const hooks: Obj = { ...obj(next.hooks) };
  const ours: ReadonlyArray<
    readonly [event: string, matcher: string, command: string, timeout: number]
  > = [
    ...HOOK_EVENTS.map(([event, matcher]) => [event, matcher, commands.hook, 10] as const),
    ...(options.guard === false
      ? []
      : GUARD_EVENTS.map(([event, matcher]) => [event, matcher, commands.guard, 5] as const)),
  ];
  for (const [event, matcher, command, timeout] of ours) {
    const groups = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
    hooks[event] = [...groups, { matcher, hooks: [{ type: 'command', command, timeout }] }];
  }
  next.hooks = hooks;
  return next;
}

/** Where settings.json is for `--user` (default) or `--project`. */
export function settingsPath(scope: 'user' | 'project', env: Env, cwd = process.cwd()): string {
  if (scope === 'project') return path.join(cwd, '.claude', 'settings.json');
  const dir = env.CLAUDE_CONFIG_DIR || path.join(env.HOME || homedir(), '.claude');
  return path.join(dir, 'settings.json');
}

/** JSON with object keys sorted: settings equal whatever the order of their keys. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    obj(v)
      ? Object.fromEntries(Object.entries(v as Obj).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}
const sameSettings = (a: Obj, b: Obj) => canonical(a) === canonical(b);

/** The sidecar file that remembers what an install replaced. */
const replacedPath = (settingsFile: string) => `${settingsFile}.rotscope-replaced.json`;

function readReplaced(settingsFile: string): Replaced {
  try {
    const parsed: unknown = JSON.parse(readFileSync(replacedPath(settingsFile), 'utf8'));
    return obj(parsed) ?? {};
  } catch {
    return {};
  }
}

/** What installing `next` over `settings` replaces (merged with what an earlier install kept). */
function replacedBy(settings: Obj, next: Obj, earlier: Replaced): Replaced {
  const out: Replaced = { ...earlier };
  const own = settings.statusLine;
  if (own !== undefined && !isOurs(obj(own)?.command) && next.statusLine !== own)
    out.statusLine = own;
  const before = obj(settings.env) ?? {};
  const after = obj(next.env) ?? {};
  const env: Record<string, string | null> = { ...earlier.env };
  for (const key of OUR_ENV_KEYS) {
    if (!(key in after) || key in env) continue; // an earlier install already kept the original
    const value = before[key];
    env[key] = typeof value === 'string' ? value : null;
  }
  if (Object.keys(env).length > 0) out.env = env;
  return out;
}

/** The `claude-code` command. Exit 0 done, 1 settings.json unreadable, 2 bad usage. */
export async function claudeCodeCommand(argv: string[], io: Io, env: Env): Promise<number> {
  const values = installFlags(argv, io, CLAUDE_CODE_USAGE, {
    user: { type: 'boolean' },
    project: { type: 'boolean' },
    uninstall: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    'keep-statusline': { type: 'boolean' },
    'no-guard': { type: 'boolean' },
    url: { type: 'string' },
    token: { type: 'string' },
  });
  if (values === null) return 2;
  const url = values.url ?? (env.ROTSCOPE_URL || DEFAULT_URL);
  if (!/^https?:\/\/[^\s/]+/.test(url)) {
    io.stderr(`rotscope claude-code install: --url must be an http(s) URL, not "${url}"\n${CLAUDE_CODE_USAGE}`);
    return 2;
  }
  const tokenValue = values.token ?? (env.ROTSCOPE_TOKEN || undefined);
  const file = settingsPath(values.project ? 'project' : 'user', env);
  const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const settings = parseSettingsJson(file, before, io);
  if (settings === undefined) return 1;
  const earlier = readReplaced(file);
  const next = values.uninstall
    ? withoutOurs(settings, earlier)
    : withOurs(settings, rotscopeCommands(), {
        env: telemetryEnv(url, tokenValue),
        keepStatusLine: values['keep-statusline'] === true,
        guard: values['no-guard'] !== true,
      });
  const replaced = values.uninstall ? {} : replacedBy(settings, next, earlier);
  const after = `${JSON.stringify(next, null, 2)}\n`;
  const unchanged = sameSettings(next, settings);
  const ownStatus = obj(settings.statusLine)?.command;
  const replacesOwnStatus =
    !values.uninstall &&
    ownStatus !== undefined &&
    !isOurs(ownStatus) &&
    next.statusLine !== settings.statusLine;
  const statusWarning = replacesOwnStatus
    ? `warning: this replaces your status line (${String(ownStatus)}); --keep-statusline keeps it, ` +
      '--uninstall puts it back\n'
    : '';
  if (values['dry-run']) {
    io.stdout(
      unchanged
        ? `${file}: nothing to change\n`
        : `${statusWarning}${fileDiff(file, before, after)}`,
    );
    return 0;
  }
  if (unchanged) {
    io.stdout(
      `${file}: ${values.uninstall ? 'rotscope is not installed' : 'already installed'}, nothing to change\n`,
    );
    return 0;
  }
  if (before !== '') backup(file, io);
  io.stdout(statusWarning);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, after);
  if (values.uninstall) {
    rmSync(replacedPath(file), { force: true });
    io.stdout(
      `${file}: rotscope's status line, hooks and telemetry settings removed` +
        `${earlier.statusLine !== undefined ? ', your status line restored' : ''}\n` +
        'Restart Claude Code for it to take effect.\n',
    );
    return 0;
  }
  if (Object.keys(replaced).length > 0)
    writeFileSync(replacedPath(file), `${JSON.stringify(replaced, null, 2)}\n`);
  const base = url.replace(/\/+$/, '');
  io.stdout(
    `${file}: status line${next.statusLine === settings.statusLine ? ' (yours, kept)' : ''}, ` +
      'hooks (PreCompact, PostCompact, SessionStart' +
      `${values['no-guard'] ? '' : '; the tool-result guard on PreToolUse:Read and PostToolUse'}) and telemetry ` +
      `(traces and log events to ${base}${tokenValue === undefined ? '' : ', with your token'}) installed\n` +
      '\nNext:\n' +
      `  1. make sure rotscope is running at ${base} (rotscope serve)` +
      `${tokenValue === undefined ? '; once it has tokens, run this again with --token <ingest token>' : ''}\n` +
      '  2. restart Claude Code: running sessions keep the settings they started with\n' +
      `  3. findings appear at ${base}/#/findings and conversations at ${base}/#/conversations;\n` +
      '     the status line shows how full the context is from the next answer on\n',
  );
  return 0;
}
