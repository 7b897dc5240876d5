/**
 * The install command of the agents whose telemetry is a `telemetry` block of a settings.json
 * (Gemini CLI: ./gemini-install.ts; Qwen Code, its fork: ./qwen-install.ts), each the
 * `TelemetrySettingsAgent` it declares: the keys `enabled`, `target` (`local`), `otlpEndpoint` (the
 * server's URL), `otlpProtocol` (`http`: OTLP/HTTP JSON; their default is gRPC) and the agent's own
 * (`managed`); an `outfile` (which would take the export instead) is removed. Settings cannot carry
 * a header, so a token goes into the `.env` file beside settings.json (which the agent loads) as
 * `OTEL_EXPORTER_OTLP_HEADERS`.
 *
 * Merged with what is there; an endpoint or target the user had is replaced with a warning; each
 * changed file is backed up first (`<file>.rotscope-backup`); what the keys held before is kept in
 * `rotscope-install.json` beside it, so `--uninstall` puts it back (keys changed since are left
 * alone); running it twice changes nothing; `--dry-run` prints the diff (the token masked) and the
 * warnings, and writes nothing.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  backup,
  fanOutAdvice,
  replacedTelemetry,
  replacesExporter,
  writePrivate,
  fileDiff,
  installFlags,
  obj,
  parseSettingsJson,
  type Env,
  type Obj,
  type Io,
  readInstallState,
  readText,
  same,
  serverAndToken,
  SCOPED_INSTALL_FLAGS,
} from './install-shared.ts';

/** One agent of this kind, declared by its installer module. */
export interface TelemetrySettingsAgent {
  /** `rotscope <agent> install --help`. */
  usage: string;
  /** The folder holding settings.json: `--user` (default) or `--project` (of the current directory). */
  settingsDir(scope: 'user' | 'project', env: Env): string;
  /** The telemetry keys rotscope manages (`null` in `telemetryFor`: the key is removed). */
  managed: readonly string[];
  /**
   * The managed keys rotscope writes for a server at `url`; `before`: the telemetry block as it was
   * before the first install (a setting of the user's that install keeps is read there).
   */
  telemetryFor(url: string, before: Obj): Record<string, unknown>;
  /** What the install says when done: what is sent, a note on the token, the overriding variables. */
  done: { sends: string; tokenNote: string; envVars: string };
}

/** The `.env` variable the CLI's OTLP exporters read their headers from. */
const HEADERS_VAR = 'OTEL_EXPORTER_OTLP_HEADERS';
const STATE_FILE = 'rotscope-install.json';

/** The telemetry keys an agent's install manages. */
type Managed = string;

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

/** settings.json with the managed keys set to `values` (null removes a key). */
function withTelemetry(
  MANAGED: readonly Managed[],
  settings: Obj,
  values: Record<Managed, unknown>,
  dropEmpty: boolean,
): Obj {
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

/**
 * The install command of an agent of `agent`'s kind. Exit 0 done, 1 settings.json unreadable, 2
 * bad usage.
 */
export async function telemetrySettingsCommand(
  agent: TelemetrySettingsAgent,
  argv: string[],
  io: Io,
  env: Env,
): Promise<number> {
  const MANAGED = agent.managed;
  const values = installFlags(argv, io, agent.usage, SCOPED_INSTALL_FLAGS);
  if (values === null) return 2;
  const server = serverAndToken(values, env, io);
  if (server === null) return 2;
  const { url, token } = server;

  const dir = agent.settingsDir(values.project ? 'project' : 'user', env);
  const file = path.join(dir, 'settings.json');
  const envFile = path.join(dir, '.env');
  const stateFile = path.join(dir, STATE_FILE);
  const before = readText(file);
  const settings = parseSettingsJson(file, before, io);
  if (settings === undefined) return 1;
  const state = readInstallState<InstallState>(stateFile);
  const envBefore = readText(envFile);
  const telemetry = obj(settings.telemetry) ?? {};

  let next: Obj;
  let nextEnv: string;
  let nextState: InstallState | null;
  let theirs: string[] = [];
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
    next = withTelemetry(MANAGED, settings, restore, state.telemetryAbsent);
    const line = envLineOf(envBefore);
    nextEnv =
      state.envInstalled !== null && line === state.envInstalled
        ? withEnvLine(envBefore, state.envBefore)
        : envBefore;
    nextState = null;
  } else {
    const fresh = agent.telemetryFor(url, state === null ? telemetry : state.before);
    // what an earlier install wrote over the user's value is rotscope's own, not theirs
    const ours =
      state === null
        ? undefined
        : Object.fromEntries(
            MANAGED.filter((k) => !same(state!.installed[k], state!.before[k])).map((k) => [
              k,
              state!.installed[k],
            ]),
          );
    theirs = replacedTelemetry(telemetry, fresh, ours);
    const installed = keepExporter(fresh, telemetry, theirs, values['keep-exporter'] === true);
    const envInstalled = token === null ? null : `${HEADERS_VAR}="Authorization=Bearer%20${token}"`;
    const first = state === null;
    const prior = {} as Record<Managed, unknown>;
    for (const k of MANAGED) prior[k] = telemetry[k] ?? null;
    next = withTelemetry(MANAGED, settings, installed, false);
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

  const kept = values['keep-exporter'] === true && theirs.length > 0;
  if (!kept) for (const what of theirs) io.stdout(replacesExporter(what));
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
    if (before !== '') backup(file, io, { installed: state !== null });
    // a settings.json install created goes again when nothing else is in it
    if (values.uninstall && state?.fileAbsent === true && Object.keys(next).length === 0)
      rmSync(file, { force: true });
    else writeFileSync(file, after);
  }
  if (envChanged) {
    if (envBefore !== '') backup(envFile, io, { installed: state?.envInstalled != null });
    if (nextEnv === '') rmSync(envFile, { force: true });
    else {
      writePrivate(envFile, nextEnv);
    }
  }
  if (nextState === null) rmSync(stateFile, { force: true });
  else writeState(stateFile, nextState);
  if (values.uninstall) {
    io.stdout(`${file}: rotscope's telemetry settings removed (what was there before is back)\n`);
    return 0;
  }
  if (kept) {
    io.stdout(fanOutAdvice(theirs.join(', '), url, token));
    return 0;
  }
  if (values['keep-exporter'])
    io.stdout('--keep-exporter: no exporter of yours to keep; telemetry goes to rotscope\n');
  io.stdout(
    `${file}: ${agent.done.sends} goes to ${url}\n` +
      (token !== null
        ? `${envFile}: the token, as ${HEADERS_VAR} (${agent.done.tokenNote})\n`
        : '') +
      `${agent.done.envVars} variables in the environment override these settings\n`,
  );
  return 0;
}

/** The state holds the `.env` header lines (the token): private, like the `.env` itself. */
function writeState(file: string, state: InstallState): void {
  writePrivate(file, `${JSON.stringify(state, null, 2)}\n`);
}

/**
 * The managed keys to write: with `--keep-exporter` and an exporter of the user's (`theirs`),
 * their target, endpoint, protocol and outfile stay as they are; telemetry and traces are on.
 */
function keepExporter(
  fresh: Record<Managed, unknown>,
  telemetry: Obj,
  theirs: string[],
  keep: boolean,
): Record<Managed, unknown> {
  if (!keep || theirs.length === 0) return fresh;
  const out = { ...fresh };
  for (const key of ['target', 'otlpEndpoint', 'otlpProtocol', 'outfile'] as const)
    out[key] = telemetry[key] ?? null;
  return out;
}
