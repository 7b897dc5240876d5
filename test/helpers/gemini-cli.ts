/**
 * Runs the real Gemini CLI (`@google/gemini-cli`, a Node program installed outside the project's
 * dependencies) offline: its model is test/helpers/fake-gemini.ts (`GOOGLE_GEMINI_BASE_URL` and a
 * fake API key) and its telemetry goes, as OTLP/HTTP JSON with traces on (conventions §5.0.2), to
 * an endpoint on loopback (a real `rotscope serve`): set by `GEMINI_TELEMETRY_*` variables, or by
 * `rotscope gemini install` itself run in the CLI's HOME (`viaInstall`).
 *
 * It runs with an environment built from nothing (no variable inherited), HOME in a temp dir whose
 * `~/.gemini/settings.json` turns off usage statistics (Clearcut logging), auto-update and the
 * update check, IDE integration and folder trust prompts; the CLI is Node, so the test network
 * guard (test/helpers/network-guard.mjs) is preloaded into it and into the copy of itself it
 * relaunches (`--import` in NODE_OPTIONS), and where `unshare -n` works it also runs in a private
 * network namespace whose only interface is loopback, reaching the fake API and the OTLP
 * endpoint through Unix sockets relayed to 127.0.0.1 ports inside (test/helpers/loopback-relay.mjs).
 *
 * Where the CLI is (`.ci/run` installs it there): `$ROTSCOPE_GEMINI_CLI_HOME` (default
 * `~/.cache/gemini-cli-0.61.0/`), an npm folder holding `@google/gemini-cli@0.61.0`.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { mergeDeep, relayToTcp, runRelayed } from './private-network.ts';
import { startFakeGemini, type FakeGemini, type GeminiScript } from './fake-gemini.ts';

const GUARD = fileURLToPath(new URL('./network-guard.mjs', import.meta.url));
const ROTSCOPE_BIN = fileURLToPath(new URL('../../bin/rotscope.js', import.meta.url));

/** The Gemini CLI version the real-CLI scenarios are verified on. */
export const GEMINI_CLI_VERSION = '0.61.0';

/** The npm folder the CLI is installed in: `$ROTSCOPE_GEMINI_CLI_HOME`, else the cache folder. */
export function geminiCliHome(): string {
  return (
    process.env.ROTSCOPE_GEMINI_CLI_HOME ||
    join(homedir(), '.cache', `gemini-cli-${GEMINI_CLI_VERSION}`)
  );
}

export const GEMINI_INSTALL_HINT =
  `the real Gemini CLI ${GEMINI_CLI_VERSION} is not installed: run .ci/run, or ` +
  `mkdir -p ${geminiCliHome()} && cd ${geminiCliHome()} && npm init -y && ` +
  `npm i --save-exact @google/gemini-cli@${GEMINI_CLI_VERSION} ` +
  `(or set ROTSCOPE_GEMINI_CLI_HOME to such a folder)`;

/** The CLI's entry script (`bundle/gemini.js`) when that exact version is installed, else null. */
export function geminiCliEntry(): string | null {
  const pkg = join(geminiCliHome(), 'node_modules/@google/gemini-cli');
  try {
    const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as {
      version?: string;
    };
    if (manifest.version !== GEMINI_CLI_VERSION) return null;
  } catch {
    return null;
  }
  const entry = join(pkg, 'bundle/gemini.js');
  return existsSync(entry) ? entry : null;
}

/** Settings that keep the CLI quiet and local (merged under the scenario's own settings). */
const OFFLINE_SETTINGS = {
  security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
  privacy: { usageStatisticsEnabled: false },
  general: { disableAutoUpdate: true, disableUpdateNag: true, enableAutoUpdate: false },
  ide: { enabled: false },
  ui: { hideTips: true, hideBanner: true },
};

export interface GeminiSessionOptions {
  entry: string;
  script: GeminiScript;
  /** Where telemetry goes, e.g. `http://127.0.0.1:4318` (a rotscope server). */
  otlpUrl: string;
  model?: string;
  /** `GEMINI_TELEMETRY_LOG_PROMPTS` (the CLI's default is on). */
  logPrompts?: boolean;
  /**
   * Telemetry set up by `rotscope gemini install` (run before each run, in the CLI's HOME, with
   * the relayed OTLP URL and `token` if given) instead of `GEMINI_TELEMETRY_*` variables.
   */
  viaInstall?: { token?: string };
  /** More `~/.gemini/settings.json` keys (deep-merged over the offline ones). */
  settings?: Record<string, unknown>;
  /** Files to create in the work dir (the CLI's cwd). */
  files?: Record<string, string>;
  env?: Record<string, string>;
}

export interface GeminiRunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** The session id of the run (`--output-format json` prints it). */
  sessionId: string | null;
  isolated: boolean;
}

export interface GeminiSession {
  workDir: string;
  homeDir: string;
  api: FakeGemini;
  /** Runs `gemini -p PROMPT`; `resume` continues the latest session (`--resume latest`). */
  run(prompt: string, options?: { resume?: boolean }): Promise<GeminiRunResult>;
  close(): Promise<void>;
}

/** Starts a fake API and an OTLP relay for one Gemini CLI session (one or more runs). */
export async function startGeminiSession(options: GeminiSessionOptions): Promise<GeminiSession> {
  const root = mkdtempSync(join(tmpdir(), 'rotscope-gemini-'));
  const workDir = join(root, 'work');
  const homeDir = join(root, 'home');
  const tmpDir = join(root, 'tmp');
  for (const d of [workDir, homeDir, tmpDir, join(homeDir, '.gemini')]) mkdirSync(d);
  for (const [name, text] of Object.entries(options.files ?? {}))
    writeFileSync(join(workDir, name), text);
  const settings = mergeDeep(
    mergeDeep(
      OFFLINE_SETTINGS,
      options.logPrompts === false ? { telemetry: { logPrompts: false } } : {},
    ),
    options.settings ?? {},
  );
  const apiSocket = join(root, 'api.sock');
  const otlpSocket = join(root, 'otlp.sock');
  const api = await startFakeGemini(options.script, { socketPath: apiSocket }, workDir);
  const otlpRelay = await relayToTcp(otlpSocket, new URL(options.otlpUrl));

  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    HOME: homeDir,
    TMPDIR: tmpDir,
    NODE_OPTIONS: `--import=${pathToFileURL(GUARD).href}`,
    GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:{{api}}',
    GEMINI_API_KEY: 'fake-gemini-test-key',
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    NO_BROWSER: 'true',
    CI: '1',
    OTEL_BSP_SCHEDULE_DELAY: '500',
    OTEL_BLRP_SCHEDULE_DELAY: '500',
    ...(options.viaInstall
      ? {}
      : {
          GEMINI_TELEMETRY_ENABLED: 'true',
          GEMINI_TELEMETRY_TARGET: 'local',
          GEMINI_TELEMETRY_OTLP_ENDPOINT: 'http://127.0.0.1:{{otlp}}',
          GEMINI_TELEMETRY_OTLP_PROTOCOL: 'http',
          GEMINI_TELEMETRY_TRACES_ENABLED: 'true',
          GEMINI_TELEMETRY_LOG_PROMPTS: options.logPrompts === false ? 'false' : 'true',
        }),
    ...options.env,
  };
  let sessionId: string | null = null;

  return {
    workDir,
    homeDir,
    api,
    async run(prompt, runOptions = {}) {
      const args = ['-p', prompt, '--output-format', 'json', '--approval-mode', 'yolo'];
      if (options.model) args.push('--model', options.model);
      if (runOptions.resume) args.push('--resume', 'latest');
      // the relayed ports are only known inside: settings.json is written there (and rotscope's
      // install run there), just before the CLI
      const install = options.viaInstall
        ? ` && "$0" "$ROTSCOPE_BIN" gemini install --url "http://127.0.0.1:$OTLP_PORT"${
            options.viaInstall.token ? ' --token "$ROTSCOPE_INSTALL_TOKEN"' : ''
          } >/dev/null`
        : '';
      const fullSpec = JSON.stringify({
        forwards: { api: apiSocket, otlp: otlpSocket },
        env: {
          ...env,
          GEMINI_SETTINGS: JSON.stringify(settings, null, 2),
          OTLP_PORT: '{{otlp}}',
          ROTSCOPE_BIN,
          ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
          ROTSCOPE_INSTALL_TOKEN: options.viaInstall?.token ?? '',
        },
        cmd: [
          'sh',
          '-c',
          `printf "%s" "$GEMINI_SETTINGS" > "$HOME/.gemini/settings.json"${install} && unset GEMINI_SETTINGS OTLP_PORT ROTSCOPE_BIN ROTSCOPE_FROM_SOURCE ROTSCOPE_INSTALL_TOKEN && exec "$0" "$@"`,
          process.execPath,
          options.entry,
          ...args,
        ],
        cwd: workDir,
      });
      const { exitCode, stdout, stderr, isolated } = await runRelayed(fullSpec, {
        path: env.PATH!,
        timeoutMs: 150_000,
      });
      const json = stdout.slice(stdout.indexOf('{'));
      try {
        const result = JSON.parse(json) as { session_id?: string; sessionId?: string };
        const id = result.session_id ?? result.sessionId;
        if (typeof id === 'string') sessionId = id;
      } catch {
        // not JSON: the caller sees stdout and stderr
      }
      return { exitCode, stdout, stderr, sessionId, isolated };
    },
    async close() {
      await api.close();
      await new Promise<void>((done) => otlpRelay.close(() => done()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
