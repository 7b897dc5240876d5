/**
 * `rotscope opencode install [--user|--project] [--url URL] [--token TOKEN] [--uninstall] [--dry-run]`:
 * sends OpenCode's telemetry to a rotscope server (measured on OpenCode 1.18.33, test/e2e/opencode-real).
 *
 * OpenCode takes its OTLP endpoint from the environment only: `OTEL_EXPORTER_OTLP_ENDPOINT` (it appends
 * `/v1/traces`, `/v1/logs`; OTLP/HTTP JSON) and `OTEL_EXPORTER_OTLP_HEADERS` (`key=value` pairs, read
 * as they are: no %-decoding); no config key carries them. Its model calls are exported only with
 * `"experimental": {"openTelemetry": true}` in opencode.json. So this command:
 * - writes `experimental.openTelemetry: true` into opencode.json (`--user`, the default:
 *   `$XDG_CONFIG_HOME/opencode/opencode.json`, else `~/.config/opencode/opencode.json`; `--project`:
 *   `opencode.json` of the current directory), merged with what is there, the file backed up first
 *   (`<file>.rotscope-backup-<time>`); what the key held before is kept in `rotscope-install.json`
 *   (beside the user file; `.opencode/` for a project), so `--uninstall` puts it back;
 * - prints the lines to add to the shell profile: the endpoint, the token as a header, and
 *   `OTEL_BSP_SCHEDULE_DELAY` (OpenCode exports its spans in batches every 5 s by default and
 *   `opencode run` exits without sending the last one: a short delay loses fewer); it warns when the environment
 *   already sends OTLP elsewhere (the variable is shared by every OpenTelemetry program).
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
  SCOPED_INSTALL_FLAGS,
} from './install-shared.ts';

export const OPENCODE_USAGE =
  'usage: rotscope opencode install [--user|--project] [--url URL] [--token TOKEN] [--keep-exporter] [--uninstall] [--dry-run]\n' +
  '  --keep-exporter  with OTEL_EXPORTER_OTLP_ENDPOINT of yours in this shell: keep it and print how to\n' +
  '                   send to both with an OpenTelemetry Collector (without it: said, then replaced)\n';

const STATE_FILE = 'rotscope-install.json';

/** The batch delay (ms) the printed profile lines set: spans leave a tenth of a second after they end. */
export const OPENCODE_BATCH_DELAY_MS = 100;

/** What `rotscope-install.json` holds: `experimental.openTelemetry` before install (absent: null). */
interface InstallState {
  version: 1;
  before: unknown;
  experimentalAbsent: boolean;
  fileAbsent: boolean;
}

/** opencode.json and the folder of rotscope's state file for `--user` (default) or `--project`. */
export function openCodeConfigPaths(
  scope: 'user' | 'project',
  env: Env,
  cwd = process.cwd(),
): { file: string; stateDir: string } {
  if (scope === 'project')
    return { file: path.join(cwd, 'opencode.json'), stateDir: path.join(cwd, '.opencode') };
  const base = env.XDG_CONFIG_HOME || path.join(env.HOME || homedir(), '.config');
  const dir = path.join(base, 'opencode');
  return { file: path.join(dir, 'opencode.json'), stateDir: dir };
}

/** opencode.json with `experimental.openTelemetry` set to `value` (null removes it). */
function withOpenTelemetry(config: Obj, value: unknown, dropEmpty: boolean): Obj {
  const experimental: Obj = { ...obj(config.experimental) };
  if (value === null || value === undefined) delete experimental.openTelemetry;
  else experimental.openTelemetry = value;
  const next: Obj = { ...config };
  if (dropEmpty && Object.keys(experimental).length === 0) delete next.experimental;
  else next.experimental = experimental;
  return next;
}

/** The lines the user adds to the shell profile (the token masked unless `reveal`). */
export function openCodeProfileLines(url: string, token: string | null, reveal = true): string[] {
  const shown = token === null ? null : reveal ? token : `${'*'.repeat(8)}${token.slice(-4)}`;
  return [
    `export OTEL_EXPORTER_OTLP_ENDPOINT=${url}`,
    ...(shown === null
      ? []
      : [`export OTEL_EXPORTER_OTLP_HEADERS='Authorization=Bearer ${shown}'`]),
    `export OTEL_BSP_SCHEDULE_DELAY=${OPENCODE_BATCH_DELAY_MS}`,
  ];
}

/** The `opencode` command. Exit 0 done, 1 opencode.json unreadable, 2 bad usage. */
export async function openCodeCommand(argv: string[], io: Io, env: Env): Promise<number> {
  const values = installFlags(argv, io, OPENCODE_USAGE, SCOPED_INSTALL_FLAGS);
  if (values === null) return 2;
  const server = serverAndToken(values, env, io, { noCommas: true });
  if (server === null) return 2;
  const { url, token } = server;

  const { file, stateDir } = openCodeConfigPaths(values.project ? 'project' : 'user', env);
  const stateFile = path.join(stateDir, STATE_FILE);
  const before = readText(file);
  const config = parseSettingsJson(file, before, io);
  if (config === undefined) return 1;
  const state = readInstallState<InstallState>(stateFile);
  const current = obj(config.experimental)?.openTelemetry ?? null;

  let next: Obj;
  let nextState: InstallState | null;
  if (values.uninstall) {
    if (state === null) {
      io.stdout(`${file}: rotscope is not installed, nothing to change\n`);
      return 0;
    }
    // put back what the key held, unless it was changed after install
    next = same(current, true)
      ? withOpenTelemetry(config, state.before, state.experimentalAbsent)
      : config;
    nextState = null;
  } else {
    next = withOpenTelemetry(config, true, false);
    nextState = state ?? {
      version: 1,
      before: current,
      experimentalAbsent: config.experimental === undefined,
      fileAbsent: before.trim() === '',
    };
  }
  const after = `${JSON.stringify(next, null, 2)}\n`;
  const changed = !same(next, config) || (before === '' && !values.uninstall);

  if (values['dry-run']) {
    io.stdout(changed ? fileDiff(file, before, after) : `${file}: nothing to change\n`);
    if (!values.uninstall)
      io.stdout(profileAdvice(url, token, env, false, values['keep-exporter'] === true));
    return 0;
  }
  if (changed) {
    mkdirSync(path.dirname(file), { recursive: true });
    if (before !== '') backup(file, io, { installed: state !== null });
    // an opencode.json install created goes again when nothing else is in it
    if (values.uninstall && state?.fileAbsent === true && Object.keys(next).length === 0)
      rmSync(file, { force: true });
    else writeFileSync(file, after);
  }
  if (nextState === null) rmSync(stateFile, { force: true });
  else if (state === null) {
    mkdirSync(stateDir, { recursive: true });
    writeFileSync(stateFile, `${JSON.stringify(nextState, null, 2)}\n`);
  }
  if (values.uninstall) {
    io.stdout(
      `${file}: experimental.openTelemetry is back to what it was\n` +
        'remove the OTEL_EXPORTER_OTLP_* and OTEL_BSP_SCHEDULE_DELAY lines rotscope gave you from your shell profile\n',
    );
    return 0;
  }
  io.stdout(
    `${file}: ${changed ? '' : 'already '}set experimental.openTelemetry: true (OpenCode's model calls as spans)\n` +
      profileAdvice(url, token, env, true, values['keep-exporter'] === true),
  );
  return 0;
}

/**
 * What the user must still do: OpenCode reads its endpoint only from the environment. Warns when
 * the environment already exports OTLP somewhere else.
 */
function profileAdvice(
  url: string,
  token: string | null,
  env: Env,
  reveal: boolean,
  keep: boolean,
): string {
  const had = env.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, '');
  const theirs = had !== undefined && had !== '' && had !== url;
  if (theirs && keep)
    return (
      fanOutAdvice(`OTEL_EXPORTER_OTLP_ENDPOINT=${had} (in this shell)`, url, token) +
      `(and OTEL_BSP_SCHEDULE_DELAY=${OPENCODE_BATCH_DELAY_MS} in your shell profile: OpenCode exits without sending its last batch of spans)\n`
    );
  const warning = theirs
    ? `${replacesExporter(`OTEL_EXPORTER_OTLP_ENDPOINT=${had} (in this shell)`).trimEnd()}; the line below replaces it for every OpenTelemetry program started from the shell, not only OpenCode\n`
    : '';
  return (
    warning +
    'OpenCode reads its OTLP endpoint only from the environment: add these lines to your shell profile (~/.bashrc, ~/.zshrc), then open a new shell:\n' +
    openCodeProfileLines(url, token, reveal)
      .map((l) => `  ${l}\n`)
      .join('') +
    `(OTEL_BSP_SCHEDULE_DELAY: OpenCode sends its spans in batches, every 5 s by default, and \`opencode run\` exits without sending the last batch; ${OPENCODE_BATCH_DELAY_MS} ms sends each span almost as it ends)\n`
  );
}

/** This module as its agent's installer (its profile's `installer`, src/model/agents/). */
export const installer: AgentInstaller = { run: openCodeCommand, usage: OPENCODE_USAGE };
