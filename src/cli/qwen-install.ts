/**
 * `rotscope qwen install [--user|--project] [--url URL] [--token TOKEN] [--uninstall] [--dry-run]`:
 * points Qwen Code's telemetry at a rotscope server (measured on 0.24.4: src/ingest/qwen.ts). In its
 * settings.json (`~/.qwen/settings.json`; `--project`: `.qwen/settings.json` of the current
 * directory) the `telemetry` keys `enabled`, `target` (`local`), `otlpEndpoint` (the server's URL),
 * `otlpProtocol` (`http`: OTLP/HTTP JSON to `<url>/v1/{traces,logs,metrics}`; the CLI's default is
 * gRPC) and `logPrompts` (on: the compressor's requests are told apart by their text; a `false`
 * the user set is kept); an `outfile` (which would take the export instead) is removed. Traces need
 * no switch of their own. Settings cannot carry a header, so a token goes into the `.env` file
 * beside settings.json (which Qwen Code loads) as `OTEL_EXPORTER_OTLP_HEADERS`.
 *
 * Merged with what is there; an endpoint or target the user had is replaced with a warning; each
 * changed file is backed up first (`<file>.rotscope-backup-<time>`); what the keys held before is
 * kept in `rotscope-install.json` beside it, so `--uninstall` puts it back (keys changed since are
 * left alone); running it twice changes nothing; `--dry-run` prints the diff (the token masked) and
 * the warnings, and writes nothing.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import {
  backup,
  DEFAULT_URL,
  fileDiff,
  installFlags,
  obj,
  parseSettingsJson,
  type Env,
  type Obj,
  type Io,
} from './install-shared.ts';

export const QWEN_USAGE =
  'usage: rotscope qwen install [--user|--project] [--url URL] [--token TOKEN] [--uninstall] [--dry-run]\n';

/** The `.env` variable the CLI's OTLP exporters read their headers from. */
const HEADERS_VAR = 'OTEL_EXPORTER_OTLP_HEADERS';
const STATE_FILE = 'rotscope-install.json';

/** The telemetry keys rotscope manages (`null`: the key is removed). */
const MANAGED = [
  'enabled',
  'target',
  'otlpEndpoint',
  'otlpProtocol',
  'logPrompts',
  'outfile',
] as const;
type Managed = (typeof MANAGED)[number];

/** What `rotscope-install.json` holds: the managed keys before install, and what install wrote. */
interface InstallState {
  version: 1;
  /** Each managed key's value before the first install (null: absent). */
  before: Record<Managed, unknown>;
  /** Whether `telemetry` itself, and settings.json, were absent before. */
  telemetryAbsent: boolean;
  fileAbsent?: boolean;
  installed: Record<Managed, unknown>;
  /** The `.env` header line before, and the one install wrote (null: none). */
  envBefore: string | null;
  envInstalled: string | null;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The folder holding settings.json: `--user` (default) or `--project`. */
export function qwenSettingsDir(scope: 'user' | 'project', env: Env, cwd = process.cwd()): string {
  if (scope === 'project') return path.join(cwd, '.qwen');
  return path.join(env.HOME || homedir(), '.qwen');
}

/** The telemetry keys rotscope writes for a server at `url` (a `logPrompts: false` is kept). */
export function telemetryFor(url: string, logPrompts: unknown = null): Record<Managed, unknown> {
  return {
    enabled: true,
    target: 'local',
    otlpEndpoint: url,
    otlpProtocol: 'http',
    logPrompts: logPrompts === false ? false : true,
    outfile: null,
  };
}

/** Warnings for an exporter setting the user had that install replaces. */
function replacedWarnings(
  telemetry: Obj,
  installed: Record<Managed, unknown>,
  state: InstallState | null,
): string[] {
  const out: string[] = [];
  for (const k of ['otlpEndpoint', 'target', 'outfile'] as const) {
    const had = telemetry[k];
    if (had === undefined || had === null || same(had, installed[k] ?? null)) continue;
    // what an earlier install wrote is rotscope's own
    if (state !== null && same(had, state.installed[k] ?? null)) continue;
    out.push(
      `warning: telemetry.${k} was ${JSON.stringify(had)}; rotscope replaces it (the backup and --uninstall keep it)\n`,
    );
  }
  return out;
}

/** settings.json with the managed keys set to `values` (null removes a key). */
function withTelemetry(settings: Obj, values: Record<Managed, unknown>, dropEmpty: boolean): Obj {
  const telemetry: Obj = { ...obj(settings.telemetry) };
  for (const k of MANAGED) {
    const v = values[k];
    if (v === null || v === undefined) delete telemetry[k];
    else telemetry[k] = v;
  }
  const next: Obj = { ...settings };
  if (dropEmpty && Object.keys(telemetry).length === 0) delete next.telemetry;
  else next.telemetry = telemetry;
  return next;
}

/** The `.env` text with the header line set (or removed, `line` null). */
function withEnvLine(text: string, line: string | null): string {
  const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  const at = lines.findIndex((l) => new RegExp(`^\\s*(export\\s+)?${HEADERS_VAR}\\s*=`).test(l));
  if (line === null) {
    if (at >= 0) lines.splice(at, 1);
  } else if (at >= 0) lines[at] = line;
  else lines.push(line);
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

function envLineOf(text: string): string | null {
  for (const l of text.split('\n'))
    if (new RegExp(`^\\s*(export\\s+)?${HEADERS_VAR}\\s*=`).test(l)) return l;
  return null;
}

const mask = (text: string, token: string | null) =>
  token === null || token.length < 8
    ? text
    : text.split(token).join(`${'*'.repeat(8)}${token.slice(-4)}`);

const readText = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');

/** The `qwen` command. Exit 0 done, 1 settings.json unreadable, 2 bad usage. */
export async function qwenCommand(argv: string[], io: Io, env: Env): Promise<number> {
  const values = installFlags(argv, io, QWEN_USAGE, {
    user: { type: 'boolean' },
    project: { type: 'boolean' },
    url: { type: 'string' },
    token: { type: 'string' },
    uninstall: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
  });
  if (values === null) return 2;
  const url = (values.url ?? env.ROTSCOPE_URL ?? DEFAULT_URL).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/\s]+(\/\S*)?$/.test(url)) {
    io.stderr(
      `rotscope: --url must be an http(s) URL of a rotscope server, not ${JSON.stringify(url)}\n`,
    );
    return 2;
  }
  const token = values.token ?? env.ROTSCOPE_TOKEN ?? null;
  if (token !== null && !/^[\x21-\x7e]+$/.test(token)) {
    io.stderr('rotscope: the token must be printable ASCII without spaces\n');
    return 2;
  }

  const dir = qwenSettingsDir(values.project ? 'project' : 'user', env);
  const file = path.join(dir, 'settings.json');
  const envFile = path.join(dir, '.env');
  const stateFile = path.join(dir, STATE_FILE);
  const before = readText(file);
  const settings = parseSettingsJson(file, before, io);
  if (settings === undefined) return 1;
  let state: InstallState | null = null;
  try {
    state = existsSync(stateFile)
      ? (JSON.parse(readFileSync(stateFile, 'utf8')) as InstallState)
      : null;
  } catch {
    state = null;
  }
  const envBefore = readText(envFile);
  const telemetry = obj(settings.telemetry) ?? {};

  let next: Obj;
  let nextEnv: string;
  let nextState: InstallState | null;
  let warnings: string[] = [];
  if (values.uninstall) {
    if (state === null) {
      io.stdout(`${file}: rotscope is not installed, nothing to change\n`);
      return 0;
    }
    // put back what the keys held, unless they were changed after install
    const restore = {} as Record<Managed, unknown>;
    for (const k of MANAGED)
      restore[k] = same(telemetry[k] ?? null, state.installed[k] ?? null)
        ? state.before[k]
        : (telemetry[k] ?? null);
    next = withTelemetry(settings, restore, state.telemetryAbsent);
    const line = envLineOf(envBefore);
    nextEnv =
      state.envInstalled !== null && line === state.envInstalled
        ? withEnvLine(envBefore, state.envBefore)
        : envBefore;
    nextState = null;
  } else {
    const installed = telemetryFor(
      url,
      state === null ? telemetry.logPrompts : state.before.logPrompts,
    );
    warnings = replacedWarnings(telemetry, installed, state);
    const envInstalled = token === null ? null : `${HEADERS_VAR}="Authorization=Bearer%20${token}"`;
    const first = state === null;
    const prior = {} as Record<Managed, unknown>;
    for (const k of MANAGED) prior[k] = telemetry[k] ?? null;
    next = withTelemetry(settings, installed, false);
    nextEnv = envInstalled === null ? envBefore : withEnvLine(envBefore, envInstalled);
    nextState = {
      version: 1,
      before: first ? prior : state!.before,
      telemetryAbsent: first ? settings.telemetry === undefined : state!.telemetryAbsent,
      fileAbsent: first ? before.trim() === '' : state!.fileAbsent === true,
      installed,
      envBefore: first ? envLineOf(envBefore) : state!.envBefore,
      envInstalled: envInstalled ?? (first ? null : state!.envInstalled),
    };
  }
  const after = `${JSON.stringify(next, null, 2)}\n`;
  const settingsChanged = !same(next, settings) || (before === '' && !values.uninstall);
  const envChanged = nextEnv !== envBefore;

  for (const w of warnings) io.stdout(w);
  if (values['dry-run']) {
    if (!settingsChanged && !envChanged) io.stdout(`${file}: nothing to change\n`);
    if (settingsChanged) io.stdout(fileDiff(file, before, after));
    if (envChanged) io.stdout(fileDiff(envFile, envBefore, nextEnv, (diff) => mask(diff, token)));
    return 0;
  }
  if (!settingsChanged && !envChanged) {
    if (nextState === null) rmSync(stateFile, { force: true });
    else if (state === null) writeState(stateFile, nextState);
    io.stdout(
      `${file}: ${values.uninstall ? 'nothing of rotscope left' : 'already installed'}, nothing to change\n`,
    );
    return 0;
  }
  mkdirSync(dir, { recursive: true });
  if (settingsChanged) {
    if (before !== '') backup(file, io);
    // a settings.json install created goes again when nothing else is in it
    if (values.uninstall && state?.fileAbsent === true && Object.keys(next).length === 0)
      rmSync(file, { force: true });
    else writeFileSync(file, after);
  }
  if (envChanged) {
    if (envBefore !== '') backup(envFile, io, true);
    if (nextEnv === '') rmSync(envFile, { force: true });
    else {
      writeFileSync(envFile, nextEnv, { mode: 0o600 });
      chmodSync(envFile, 0o600);
    }
  }
  if (nextState === null) rmSync(stateFile, { force: true });
  else writeState(stateFile, nextState);
  if (values.uninstall) {
    io.stdout(`${file}: rotscope's telemetry settings removed (what was there before is back)\n`);
    return 0;
  }
  io.stdout(
    `${file}: Qwen Code telemetry (spans and logs, OTLP/HTTP JSON) goes to ${url}\n` +
      (token !== null
        ? `${envFile}: the token, as ${HEADERS_VAR} (or export it in your shell)\n`
        : '') +
      'QWEN_TELEMETRY_* variables in the environment override these settings\n',
  );
  return 0;
}

function writeState(file: string, state: InstallState): void {
  writeFileSync(file, `${JSON.stringify(state, null, 2)}\n`);
}
