/**
 * `rotscope gemini install [--user|--project] [--url URL] [--token TOKEN] [--uninstall] [--dry-run]`:
 * points Gemini CLI's telemetry at a rotscope server (conventions §5.0.2): in its settings.json
 * (`$GEMINI_CLI_HOME/.gemini/settings.json`, default `~/.gemini/settings.json`; `--project`:
 * `.gemini/settings.json` of the current directory) the `telemetry` keys `enabled`, `target`
 * (`local`), `otlpEndpoint` (the server's URL), `otlpProtocol` (`http`: OTLP/HTTP JSON; the CLI's
 * default is gRPC) and `traces` (without traces the calls carry no token counts); an `outfile`
 * (which would take the export instead) is removed; `logPrompts` is left as it is (on by
 * default: it tells a cut function call from cut text). Settings cannot carry a header, so a
 * token goes into the `.env` file beside settings.json (which Gemini CLI loads, in trusted folders,
 * unless a project's own `.env` comes first) as `OTEL_EXPORTER_OTLP_HEADERS`.
 *
 * Merged with what is there; each changed file is backed up first
 * (`<file>.rotscope-backup`); what the keys held before is kept in
 * `rotscope-install.json` beside it, so `--uninstall` puts it back (keys changed since are left
 * alone); running it twice changes nothing; `--dry-run` prints the diff (the token masked) and
 * writes nothing. The command is ./telemetry-settings-install.ts, with these keys.
 */
import { homedir } from 'node:os';
import path from 'node:path';
import type { AgentInstaller, Env, Io } from './install-shared.ts';
import {
  telemetrySettingsCommand,
  type TelemetrySettingsAgent,
} from './telemetry-settings-install.ts';

export const GEMINI_USAGE =
  'usage: rotscope gemini install [--user|--project] [--url URL] [--token TOKEN]\n' +
  '       [--keep-exporter] [--uninstall] [--dry-run]\n' +
  '  --keep-exporter  keep an exporter of yours (telemetry.target, otlpEndpoint, outfile) and print\n' +
  '                   how to send to both with an OpenTelemetry Collector; without it, install says\n' +
  '                   what it replaces first (--dry-run too)\n' +
  '  --uninstall      put back what install replaced;  --dry-run  print the change, write nothing\n';

/** The folder holding settings.json: `--user` (default) or `--project`. */
export function geminiSettingsDir(
  scope: 'user' | 'project',
  env: Env,
  cwd = process.cwd(),
): string {
  if (scope === 'project') return path.join(cwd, '.gemini');
  return path.join(env.GEMINI_CLI_HOME || env.HOME || homedir(), '.gemini');
}

/** Gemini CLI's telemetry settings (traces on: without them its calls carry no token counts). */
const GEMINI: TelemetrySettingsAgent = {
  usage: GEMINI_USAGE,
  settingsDir: (scope, env) => geminiSettingsDir(scope, env),
  managed: ['enabled', 'target', 'otlpEndpoint', 'otlpProtocol', 'traces', 'outfile'],
  telemetryFor: (url) => ({
    enabled: true,
    target: 'local',
    otlpEndpoint: url,
    otlpProtocol: 'http',
    traces: true,
    outfile: null,
  }),
  done: {
    sends: 'Gemini CLI telemetry (traces on, OTLP/HTTP JSON)',
    tokenNote: 'read in trusted folders without a .env of their own; or export it in your shell',
    envVars: 'GEMINI_TELEMETRY_*',
  },
};

/** The `gemini` command. Exit 0 done, 1 settings.json unreadable, 2 bad usage. */
export function geminiCommand(argv: string[], io: Io, env: Env): Promise<number> {
  return telemetrySettingsCommand(GEMINI, argv, io, env);
}

/** This module as its agent's installer (its profile's `installer`, src/model/agents/). */
export const installer: AgentInstaller = { run: geminiCommand, usage: GEMINI_USAGE };
