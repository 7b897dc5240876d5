/**
 * `rotscope copilot install [--url URL] [--token TOKEN] [--uninstall] [--dry-run] [--print-env]`:
 * connects GitHub Copilot CLI (1.0.102) to a rotscope server.
 *
 * Copilot CLI reads its OTLP endpoint only from the environment (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 * which also turns its telemetry on; read by its native runtime): its settings file
 * (`$COPILOT_HOME/settings.json`, default `~/.copilot/settings.json`) has `telemetry` keys for
 * what the spans carry (`capture.*`, `captureContent`, `headersProvider`) but none for where they
 * go. So this command:
 * - sets `telemetry.capture.toolOutput` to true in settings.json (tool results on the
 *   `execute_tool` spans and in the calls' new messages: without them rotscope has no tool sizes
 *   and `tool_takeover` is blind; prompts and responses stay as they were), merged with what is
 *   there, backed up first (`<file>.rotscope-backup-<time>`), the key's earlier value kept in
 *   `rotscope-install.json` beside it so `--uninstall` puts it back;
 * - prints the lines for the shell profile (`export OTEL_EXPORTER_OTLP_ENDPOINT=...`, and the token
 *   as `OTEL_EXPORTER_OTLP_HEADERS`); `--print-env` prints only those lines (for `eval`), and
 *   warns on stderr when the environment already sends Copilot's telemetry elsewhere (another
 *   endpoint, or the file exporter).
 * Running it twice changes nothing; `--dry-run` prints the diff and writes nothing.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import {
  backup,
  fanOutAdvice,
  replacesExporter,
  fileDiff,
  installFlags,
  obj,
  parseSettingsJson,
  type Env,
  type Io,
  type Obj,
  type AgentInstaller,
  readInstallState,
  readText,
  same,
  serverAndToken,
} from './install-shared.ts';

export const COPILOT_USAGE =
  'usage: rotscope copilot install [--url URL] [--token TOKEN] [--keep-exporter] [--uninstall] [--dry-run] [--print-env]\n' +
  '  --keep-exporter  with OTEL_EXPORTER_OTLP_ENDPOINT of yours in this shell: keep it and print how to\n' +
  '                   send to both with an OpenTelemetry Collector (without it: said, then replaced)\n';

const STATE_FILE = 'rotscope-install.json';

/** What `rotscope-install.json` holds: `telemetry.capture.toolOutput` before and after install. */
interface InstallState {
  version: 1;
  /** The key's value before the first install (null: absent). */
  before: unknown;
  installed: true;
  /** Whether settings.json was absent or empty before. */
  fileAbsent: boolean;
}

/** The folder of Copilot CLI's settings.json: `$COPILOT_HOME`, else `~/.copilot`. */
export function copilotHome(env: Env): string {
  return env.COPILOT_HOME || path.join(env.HOME || homedir(), '.copilot');
}

/** settings.json with `telemetry.capture.toolOutput` set to `value` (null removes it, and emptied objects). */
function withToolOutput(settings: Obj, value: unknown): Obj {
  const telemetry: Obj = { ...obj(settings.telemetry) };
  const capture: Obj = { ...obj(telemetry.capture) };
  if (value === null || value === undefined) delete capture.toolOutput;
  else capture.toolOutput = value;
  if (Object.keys(capture).length === 0) delete telemetry.capture;
  else telemetry.capture = capture;
  const next: Obj = { ...settings };
  if (Object.keys(telemetry).length === 0) delete next.telemetry;
  else next.telemetry = telemetry;
  return next;
}

const quote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;

/** The shell lines that send Copilot CLI's telemetry to `url`. */
export function copilotEnvLines(url: string, token: string | null): string[] {
  return [
    `export OTEL_EXPORTER_OTLP_ENDPOINT=${quote(url)}`,
    ...(token === null
      ? []
      : [`export OTEL_EXPORTER_OTLP_HEADERS=${quote(`Authorization=Bearer ${token}`)}`]),
  ];
}

/** Warnings for an environment that already sends Copilot's telemetry somewhere else. */
function environmentWarnings(env: Env, url: string): string[] {
  const out: string[] = [];
  const current = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (current && current.replace(/\/+$/, '') !== url)
    out.push(
      `rotscope: ${replacesExporter(`OTEL_EXPORTER_OTLP_ENDPOINT=${current} (in this shell)`).trimEnd()}; the lines below replace it for Copilot CLI and every other OpenTelemetry program started from the shell\n`,
    );
  if (env.COPILOT_OTEL_FILE_EXPORTER_PATH || env.COPILOT_OTEL_EXPORTER_TYPE === 'file')
    out.push(
      'rotscope: warning: COPILOT_OTEL_FILE_EXPORTER_PATH / COPILOT_OTEL_EXPORTER_TYPE=file are set: Copilot CLI writes its telemetry to a file instead; unset them\n',
    );
  if (
    env.OTEL_EXPORTER_OTLP_PROTOCOL === 'grpc' ||
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL === 'grpc'
  )
    out.push(
      'rotscope: warning: the OTLP protocol is set to grpc: rotscope takes OTLP/HTTP; unset it\n',
    );
  return out;
}

/** The `copilot` command. Exit 0 done, 1 settings.json unreadable, 2 bad usage. */
export async function copilotCommand(argv: string[], io: Io, env: Env): Promise<number> {
  const values = installFlags(argv, io, COPILOT_USAGE, {
    url: { type: 'string' },
    token: { type: 'string' },
    uninstall: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    'print-env': { type: 'boolean' },
    'keep-exporter': { type: 'boolean' },
  });
  if (values === null) return 2;
  const server = serverAndToken(values, env, io);
  if (server === null) return 2;
  const { url, token } = server;
  // an endpoint of the user's in this shell: replaced by the lines below, unless kept
  const shellEndpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, '');
  const theirs = shellEndpoint && shellEndpoint !== url ? shellEndpoint : undefined;
  const keep = values['keep-exporter'] === true && theirs !== undefined && !values.uninstall;
  const lines = keep ? [] : copilotEnvLines(url, token);
  if (values['print-env']) {
    for (const w of environmentWarnings(env, url)) io.stderr(w);
    io.stdout(`${lines.join('\n')}\n`);
    return 0;
  }

  const dir = copilotHome(env);
  const file = path.join(dir, 'settings.json');
  const stateFile = path.join(dir, STATE_FILE);
  const before = readText(file);
  const settings = parseSettingsJson(file, before, io);
  if (settings === undefined) return 1;
  const state = readInstallState<InstallState>(stateFile);
  const current = obj(obj(settings.telemetry)?.capture)?.toolOutput ?? null;

  let next: Obj;
  let nextState: InstallState | null;
  if (values.uninstall) {
    if (state === null) {
      io.stdout(`${file}: rotscope is not installed, nothing to change\n`);
      return 0;
    }
    // put back what the key held, unless it was changed after install
    next = same(current, true) ? withToolOutput(settings, state.before) : settings;
    nextState = null;
  } else {
    if (current === false)
      io.stderr(
        `rotscope: warning: ${file} had telemetry.capture.toolOutput false: set to true (rotscope needs the tool results' sizes; --uninstall puts false back)\n`,
      );
    if (obj(settings.telemetry)?.captureContent === false)
      io.stderr(
        `rotscope: warning: ${file} has telemetry.captureContent false; telemetry.capture.toolOutput true still sends tool results\n`,
      );
    next = withToolOutput(settings, true);
    nextState = state ?? {
      version: 1,
      before: current,
      installed: true,
      fileAbsent: before.trim() === '',
    };
  }
  const after = `${JSON.stringify(next, null, 2)}\n`;
  const changed = !same(next, settings) || (before === '' && !values.uninstall);
  const profile = keep
    ? fanOutAdvice(`OTEL_EXPORTER_OTLP_ENDPOINT=${theirs} (in this shell)`, url, token)
    : values.uninstall
      ? `remove these lines from your shell profile (~/.bashrc, ~/.zshrc):\n${lines.map((l) => `  ${l}`).join('\n')}\n`
      : `add these lines to your shell profile (~/.bashrc, ~/.zshrc; Copilot CLI reads its OTLP endpoint only from the environment), then open a new shell:\n${lines.map((l) => `  ${l}`).join('\n')}\n`;

  // said before anything is written, and under --dry-run too
  if (!values.uninstall && !keep) for (const w of environmentWarnings(env, url)) io.stderr(w);
  if (values['dry-run']) {
    io.stdout(changed ? fileDiff(file, before, after) : `${file}: nothing to change\n`);
    io.stdout(profile);
    return 0;
  }
  if (changed) {
    mkdirSync(dir, { recursive: true });
    if (before !== '') backup(file, io, { installed: state !== null });
    if (values.uninstall && state?.fileAbsent === true && Object.keys(next).length === 0)
      rmSync(file, { force: true });
    else writeFileSync(file, after);
  }
  if (nextState === null) rmSync(stateFile, { force: true });
  else if (state === null || changed)
    writeFileSync(stateFile, `${JSON.stringify(nextState, null, 2)}\n`);
  if (values.uninstall) {
    io.stdout(
      `${file}: ${changed ? "rotscope's telemetry setting removed (what was there before is back)" : 'nothing of rotscope left, nothing to change'}\n${profile}`,
    );
    return 0;
  }
  io.stdout(
    `${file}: ${changed ? 'Copilot CLI sends tool results in its telemetry (telemetry.capture.toolOutput)' : 'already installed, nothing to change'}\n${profile}`,
  );
  return 0;
}

/** This module as its agent's installer (its profile's `installer`, src/model/agents/). */
export const installer: AgentInstaller = { run: copilotCommand, usage: COPILOT_USAGE };
