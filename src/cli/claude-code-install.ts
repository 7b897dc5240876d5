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
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  backup,
  DEFAULT_URL,
  fanOutAdvice,
  fileDiff,
  installFlags,
  replacesExporter,
  writePrivate,
  obj,
  parseSettingsJson,
  type Env,
  type Io,
  type Obj,
  type AgentInstaller,
} from './install-shared.ts';

export const CLAUDE_CODE_USAGE = `usage: rotscope claude-code install [--user|--project] [--url URL] [--token TOKEN] [--keep-statusline]
                                    [--no-guard] [--keep-exporter] [--uninstall] [--dry-run]
Adds rotscope's status line, hooks, tool-result guard and telemetry settings to Claude Code's
settings.json, merged with what is there (backup: settings.json.rotscope-backup, private).
  --user             ~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json), the default
  --project          .claude/settings.json of the current folder
  --url URL          the rotscope server Claude Code sends to (default $ROTSCOPE_URL, else
                     http://127.0.0.1:4318)
  --token TOKEN      an ingest token, once the server has tokens (default $ROTSCOPE_TOKEN); kept in
                     settings.json.rotscope-token (mode 0600), read by the hooks and by Claude
                     Code's otelHeadersHelper, never written into settings.json
  --keep-statusline  keep a status line of your own instead of rotscope's
  --no-guard         leave out the tool-result guard (PreToolUse/PostToolUse; see README)
  --keep-exporter    keep an OTLP exporter endpoint of yours (OTEL_EXPORTER_OTLP_ENDPOINT) and
                     print how to send to both with an OpenTelemetry Collector; without it, install
                     says which endpoint it replaces (your metrics stay on it)
  --uninstall        remove rotscope's entries and put back what install replaced
  --dry-run          print the change (and what it replaces) and write nothing
`;

/**
 * The `env` entries rotscope writes (null: the key is removed): Claude Code's telemetry to the
 * server (traces and log events over OTLP/HTTP protobuf; conventions §5.1) and the hook's
 * server. The token is not among them: Claude Code's `otelHeadersHelper` prints the auth
 * header from `tokenFile` (mode 0600), and the hooks read that file (ROTSCOPE_TOKEN_FILE);
 * the headers and token keys earlier versions wrote are removed.
 */
export function telemetryEnv(
  url: string,
  tokenFile: string | undefined,
): Record<string, string | null> {
  const base = url.replace(/\/+$/, '');
  return {
    CLAUDE_CODE_ENABLE_TELEMETRY: '1',
    CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: '1',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_LOGS_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_EXPORTER_OTLP_ENDPOINT: base,
    OTEL_EXPORTER_OTLP_HEADERS: null,
    ROTSCOPE_URL: base,
    ROTSCOPE_TOKEN: null,
    ROTSCOPE_TOKEN_FILE: tokenFile ?? null,
  };
}

/** The keys that choose where OTLP goes: left as the user has them with `--keep-exporter`. */
const EXPORTER_KEYS = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_HEADERS',
];

/** Keys rotscope may set to keep the user's metrics where they went (see `keepMetrics`). */
const METRICS_KEYS = [
  'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
  'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL',
  'OTEL_EXPORTER_OTLP_METRICS_HEADERS',
  'OTEL_METRICS_EXPORTER',
];

/** Every `env` key rotscope may write (removed on uninstall when it wrote them). */
const OUR_ENV_KEYS = [...Object.keys(telemetryEnv(DEFAULT_URL, 'x')), ...METRICS_KEYS];

/** The private file holding the token, beside settings.json. */
export const tokenFilePath = (settingsFile: string) => `${settingsFile}.rotscope-token`;

/**
 * rotscope does not read metrics, so none are sent to it: when the user sends OTLP metrics
 * (`OTEL_METRICS_EXPORTER` with `otlp`) to an endpoint of theirs that install replaces, the
 * metrics-only keys keep them going there (their protocol and headers with them); when the
 * generic endpoint is rotscope's with no metrics endpoint of theirs, `otlp` leaves the metrics
 * exporters. Returns the entries to add and what to say.
 */
function keepMetrics(
  env: Obj,
  theirEndpoint: string | undefined,
): { entries: Record<string, string | null>; said: string } {
  const exporters = typeof env.OTEL_METRICS_EXPORTER === 'string' ? env.OTEL_METRICS_EXPORTER : '';
  const list = exporters
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (!list.includes('otlp') || typeof env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT === 'string')
    return { entries: {}, said: '' };
  if (theirEndpoint !== undefined) {
    const protocol =
      typeof env.OTEL_EXPORTER_OTLP_PROTOCOL === 'string'
        ? env.OTEL_EXPORTER_OTLP_PROTOCOL
        : 'http/protobuf';
    const endpoint = protocol === 'grpc' ? theirEndpoint : `${theirEndpoint}/v1/metrics`;
    const headers = env.OTEL_EXPORTER_OTLP_HEADERS;
    return {
      entries: {
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: protocol,
        ...(typeof headers === 'string' ? { OTEL_EXPORTER_OTLP_METRICS_HEADERS: headers } : {}),
      },
      said: `your metrics keep going to ${endpoint} (OTEL_EXPORTER_OTLP_METRICS_ENDPOINT): rotscope does not read metrics\n`,
    };
  }
  const left = list.filter((e) => e !== 'otlp');
  return {
    entries: { OTEL_METRICS_EXPORTER: left.length > 0 ? left.join(',') : 'none' },
    said:
      `OTEL_METRICS_EXPORTER=${exporters} would send metrics to rotscope, which does not read them: ` +
      `set to ${left.length > 0 ? left.join(',') : 'none'} (set OTEL_EXPORTER_OTLP_METRICS_ENDPOINT to a metrics backend to keep them)\n`,
  };
}

/** What an install replaced, so that uninstall puts it back. */
interface Replaced {
  /** The status line that was there before rotscope's, if it was not rotscope's own. */
  statusLine?: unknown;
  /** Earlier values of the env keys rotscope set or removed (null: the key was absent). */
  env?: Record<string, string | null>;
  /** The otelHeadersHelper that was there before rotscope's (null: none). */
  otelHeadersHelper?: unknown;
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
  return {
    statusline: `${quote(process.execPath)} ${quote(path.join(bin, 'rotscope-statusline.cjs'))}`,
    hook: `${quote(process.execPath)} ${quote(path.join(bin, 'rotscope.js'))} hook`,
    guard: `${quote(process.execPath)} ${quote(path.join(bin, 'rotscope-guard.cjs'))}`,
  };
}

const quote = (s: string) => `"${s.replace(/(["\\$`])/g, '\\$1')}"`;

/** The `otelHeadersHelper` command: prints the auth header from the private token file. */
export function headersHelperCommand(tokenFile: string): string {
  const bin = fileURLToPath(new URL('../../bin/', import.meta.url));
  return `${quote(process.execPath)} ${quote(path.join(bin, 'rotscope-otel-headers.cjs'))} ${quote(tokenFile)}`;
}

/** True for a command rotscope wrote (its status line or its hook). */
function isOurs(command: unknown): boolean {
  return (
    typeof command === 'string' &&
    (/rotscope-(statusline|guard)\.cjs"?$/.test(command) ||
      /rotscope(\.js"?)? hook$/.test(command) ||
      /rotscope-otel-headers\.cjs"? /.test(command))
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
  if (isOurs(next.otelHeadersHelper)) {
    delete next.otelHeadersHelper;
    if (replaced.otelHeadersHelper !== undefined && replaced.otelHeadersHelper !== null)
      next.otelHeadersHelper = replaced.otelHeadersHelper;
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
  options: {
    env?: Record<string, string | null>;
    keepStatusLine?: boolean;
    guard?: boolean;
    /** The otelHeadersHelper command (with a token), replacing the user's. */
    headersHelper?: string;
  } = {},
): Obj {
  const next = withoutOurs(settings);
  const own = obj(settings.statusLine);
  if (!(options.keepStatusLine && own !== undefined && !isOurs(own.command)))
    next.statusLine = { type: 'command', command: commands.statusline, padding: 0 };
  if (options.env !== undefined) {
    const env: Obj = { ...obj(next.env) };
    for (const [key, value] of Object.entries(options.env)) {
      if (value === null) delete env[key];
      else env[key] = value;
    }
    if (Object.keys(env).length > 0) next.env = env;
    else delete next.env;
  }
  if (options.headersHelper !== undefined) next.otelHeadersHelper = options.headersHelper;
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
    if (key in env) continue; // an earlier install already kept the original
    if (!(key in after) && !(key in before)) continue; // neither there nor set
    if (before[key] === after[key]) continue; // left as it was
    const value = before[key];
    env[key] = typeof value === 'string' ? value : null;
  }
  if (Object.keys(env).length > 0) out.env = env;
  if (
    earlier.otelHeadersHelper === undefined &&
    next.otelHeadersHelper !== settings.otelHeadersHelper &&
    !isOurs(settings.otelHeadersHelper)
  )
    out.otelHeadersHelper = settings.otelHeadersHelper ?? null;
  return out;
}

/**
 * The user's own OTLP endpoint in settings.json's env (or, when settings.json has none, in the
 * shell install runs from: settings.json's env wins over it in Claude Code), when it is not
 * rotscope's. Undefined when there is none of theirs.
 */
function theirEndpoint(
  settingsEnv: Obj,
  earlier: Replaced,
  shell: Env,
  base: string,
): { value: string; where: string } | undefined {
  const strip = (v: string) => v.replace(/\/+$/, '');
  const kept = earlier.env?.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (kept !== undefined)
    return kept === null ? undefined : { value: strip(kept), where: 'settings.json' };
  const own = settingsEnv.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (typeof own === 'string' && own !== '' && strip(own) !== base)
    return { value: strip(own), where: 'settings.json' };
  const inShell = shell.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (typeof own !== 'string' && inShell && strip(inShell) !== base)
    return { value: strip(inShell), where: 'this shell' };
  return undefined;
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
    'keep-exporter': { type: 'boolean' },
    url: { type: 'string' },
    token: { type: 'string' },
  });
  if (values === null) return 2;
  const url = values.url ?? (env.ROTSCOPE_URL || DEFAULT_URL);
  if (!/^https?:\/\/[^\s/]+/.test(url)) {
    io.stderr(
      `rotscope claude-code install: --url must be an http(s) URL, not "${url}"\n${CLAUDE_CODE_USAGE}`,
    );
    return 2;
  }
  const base = url.replace(/\/+$/, '');
  const tokenValue = values.token ?? (env.ROTSCOPE_TOKEN || undefined);
  if (tokenValue !== undefined && !/^[\x21-\x7e]+$/.test(tokenValue)) {
    io.stderr('rotscope claude-code install: the token must be printable ASCII without spaces\n');
    return 2;
  }
  const file = settingsPath(values.project ? 'project' : 'user', env);
  const tokenFile = tokenFilePath(file);
  const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const settings = parseSettingsJson(file, before, io);
  if (settings === undefined) return 1;
  const earlier = readReplaced(file);
  const settingsEnv = obj(settings.env) ?? {};
  const theirs = values.uninstall ? undefined : theirEndpoint(settingsEnv, earlier, env, base);
  const keepExporter = values['keep-exporter'] === true && theirs !== undefined;
  let said = '';
  let telemetry: Record<string, string | null> = {};
  if (!values.uninstall) {
    telemetry = telemetryEnv(url, tokenValue === undefined ? undefined : tokenFile);
    if (keepExporter) {
      for (const key of EXPORTER_KEYS) delete telemetry[key];
    } else {
      // the user's metrics stay off rotscope (which drops them)
      const metrics = keepMetrics(
        theirs?.where === 'settings.json'
          ? { ...settingsEnv, ...earlierValues(earlier) }
          : { ...settingsEnv },
        theirs?.where === 'settings.json' ? theirs.value : undefined,
      );
      Object.assign(telemetry, metrics.entries);
      if (theirs !== undefined && !alreadyOurs(settingsEnv, base))
        said += replacesExporter(
          `OTEL_EXPORTER_OTLP_ENDPOINT=${theirs.value} (in ${theirs.where})`,
        );
      said += metrics.said;
    }
  }
  const next = values.uninstall
    ? withoutOurs(settings, earlier)
    : withOurs(settings, rotscopeCommands(), {
        env: telemetry,
        keepStatusLine: values['keep-statusline'] === true,
        guard: values['no-guard'] !== true,
        ...(tokenValue !== undefined && !keepExporter
          ? { headersHelper: headersHelperCommand(tokenFile) }
          : {}),
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
  if (replacesOwnStatus)
    said +=
      `warning: this replaces your status line (${String(ownStatus)}); --keep-statusline keeps it, ` +
      '--uninstall puts it back\n';
  const tokenChanged =
    !values.uninstall &&
    tokenValue !== undefined &&
    (!existsSync(tokenFile) || readFileSync(tokenFile, 'utf8').trim() !== tokenValue);
  if (values['dry-run']) {
    io.stdout(
      unchanged && !tokenChanged
        ? `${file}: nothing to change\n`
        : `${said}${fileDiff(file, before, after)}${tokenChanged ? `${tokenFile}: the token (mode 0600)\n` : ''}`,
    );
    return 0;
  }
  if (unchanged && !tokenChanged) {
    io.stdout(
      `${file}: ${values.uninstall ? 'rotscope is not installed' : 'already installed'}, nothing to change\n`,
    );
    return 0;
  }
  io.stdout(said);
  mkdirSync(path.dirname(file), { recursive: true });
  if (tokenValue !== undefined && !values.uninstall) writePrivate(tokenFile, `${tokenValue}\n`);
  if (!unchanged) {
    if (before !== '') backup(file, io, { installed: hasOurs(settings) });
    writePrivate(file, after);
  }
  if (values.uninstall) {
    rmSync(replacedPath(file), { force: true });
    rmSync(tokenFile, { force: true });
    io.stdout(
      `${file}: rotscope's status line, hooks and telemetry settings removed` +
        `${earlier.statusLine !== undefined ? ', your status line restored' : ''}\n` +
        'Restart Claude Code for it to take effect.\n',
    );
    return 0;
  }
  if (Object.keys(replaced).length > 0)
    writePrivate(replacedPath(file), `${JSON.stringify(replaced, null, 2)}\n`);
  if (keepExporter)
    io.stdout(fanOutAdvice(`OTEL_EXPORTER_OTLP_ENDPOINT=${theirs.value}`, base, tokenValue));
  else if (values['keep-exporter'])
    io.stdout('--keep-exporter: no OTLP endpoint of yours to keep; telemetry goes to rotscope\n');
  io.stdout(
    `${file}: status line${next.statusLine === settings.statusLine ? ' (yours, kept)' : ''}, ` +
      'hooks (PreCompact, PostCompact, SessionStart' +
      `${values['no-guard'] ? '' : '; the tool-result guard on PreToolUse:Read and PostToolUse'}) and telemetry ` +
      `(traces and log events to ${keepExporter ? `your endpoint ${theirs.value}` : base}` +
      `${tokenValue === undefined ? '' : `, with your token from ${tokenFile}, private to you`}) installed\n` +
      '\nNext:\n' +
      `  1. make sure rotscope is running at ${base} (rotscope serve)` +
      `${tokenValue === undefined ? '; once it has tokens, run this again with --token <ingest token>' : ''}\n` +
      '  2. restart Claude Code: running sessions keep the settings they started with\n' +
      `  3. findings appear at ${base}/#/findings and conversations at ${base}/#/conversations;\n` +
      '     the status line shows how full the context is from the next answer on\n',
  );
  return 0;
}

/** The values an earlier install replaced, as settings env entries (for what the user had). */
function earlierValues(earlier: Replaced): Obj {
  const out: Obj = {};
  for (const [key, value] of Object.entries(earlier.env ?? {}))
    if (value !== null && !key.startsWith('ROTSCOPE_')) out[key] = value;
  return out;
}

/** True when the endpoint in settings.json is already rotscope's (a reinstall says nothing new). */
function alreadyOurs(settingsEnv: Obj, base: string): boolean {
  const own = settingsEnv.OTEL_EXPORTER_OTLP_ENDPOINT;
  return typeof own === 'string' && own.replace(/\/+$/, '') === base;
}

/** True when settings.json holds any of rotscope's entries. */
function hasOurs(settings: Obj): boolean {
  return !sameSettings(withoutOurs(settings), settings) || isOurs(settings.otelHeadersHelper);
}

/** This module as its agent's installer (its profile's `installer`, src/model/agents/). */
export const installer: AgentInstaller = { run: claudeCodeCommand, usage: CLAUDE_CODE_USAGE };
