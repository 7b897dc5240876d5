/**
 * `rotscope qwen install [--user|--project] [--url URL] [--token TOKEN] [--uninstall] [--dry-run]`:
 * points Qwen Code's telemetry at a rotscope server (measured on 0.24.4: src/ingest/qwen.ts). In its
 * settings.json (`~/.qwen/settings.json`; `--project`: `.qwen/settings.json` of the current
 * directory) the `telemetry` keys `enabled`, `target` (`local`), `otlpEndpoint` (the server's URL),
 * `otlpProtocol` (`http`: OTLP/HTTP JSON to `<url>/v1/{traces,logs,metrics}`; the CLI's default is
 * gRPC) and `logPrompts` (on: the compressor's requests are told apart by their text; a `false`
 * the user set is kept); an `outfile` (which would take the export instead) is removed. Traces need
 * no switch of their own. Settings cannot carry a header, so a token goes into the `.env` file
 * beside settings.json (which Qwen Code loads) as `OTEL_EXPORTER_OTLP_HEADERS`. The command is
 * Gemini CLI's (./telemetry-settings-install.ts), with these keys.
 *
 * Merged with what is there; an endpoint or target the user had is replaced with a warning; each
 * changed file is backed up first (`<file>.rotscope-backup`); what the keys held before is
 * kept in `rotscope-install.json` beside it, so `--uninstall` puts it back (keys changed since are
 * left alone); running it twice changes nothing; `--dry-run` prints the diff (the token masked) and
 * the warnings, and writes nothing.
 */
import { homedir } from 'node:os';
import path from 'node:path';
import type { AgentInstaller, Env, Io } from './install-shared.ts';
import {
  telemetrySettingsCommand,
  type TelemetrySettingsAgent,
} from './telemetry-settings-install.ts';

export const QWEN_USAGE =
  'usage: rotscope qwen install [--user|--project] [--url URL] [--token TOKEN]\n' +
  '       [--keep-exporter] [--uninstall] [--dry-run]\n' +
  '  --keep-exporter  keep an exporter of yours (telemetry.target, otlpEndpoint, outfile) and print\n' +
  '                   how to send to both with an OpenTelemetry Collector; without it, install says\n' +
  '                   what it replaces first (--dry-run too)\n' +
  '  --uninstall      put back what install replaced;  --dry-run  print the change, write nothing\n';

/** The folder holding settings.json: `--user` (default) or `--project`. */
export function qwenSettingsDir(scope: 'user' | 'project', env: Env, cwd = process.cwd()): string {
  if (scope === 'project') return path.join(cwd, '.qwen');
  return path.join(env.HOME || homedir(), '.qwen');
}

/** Qwen Code's telemetry settings (a `logPrompts: false` of the user's is kept). */
const QWEN: TelemetrySettingsAgent = {
  usage: QWEN_USAGE,
  settingsDir: (scope, env) => qwenSettingsDir(scope, env),
  managed: ['enabled', 'target', 'otlpEndpoint', 'otlpProtocol', 'logPrompts', 'outfile'],
  telemetryFor: (url, before) => ({
    enabled: true,
    target: 'local',
    otlpEndpoint: url,
    otlpProtocol: 'http',
    logPrompts: before.logPrompts === false ? false : true,
    outfile: null,
  }),
  done: {
    sends: 'Qwen Code telemetry (spans and logs, OTLP/HTTP JSON)',
    tokenNote: 'or export it in your shell',
    envVars: 'QWEN_TELEMETRY_*',
  },
};

/** The `qwen` command. Exit 0 done, 1 settings.json unreadable, 2 bad usage. */
export function qwenCommand(argv: string[], io: Io, env: Env): Promise<number> {
  return telemetrySettingsCommand(QWEN, argv, io, env);
}

/** This module as its agent's installer (its profile's `installer`, src/model/agents/). */
export const installer: AgentInstaller = { run: qwenCommand, usage: QWEN_USAGE };
