/**
 * Runs the real Qwen Code (`@qwen-code/qwen-code`, a Node program installed outside the project's
 * dependencies) offline, as test/helpers/gemini-cli.ts runs Gemini CLI: its model is
 * test/helpers/fake-openai-chat.ts (`OPENAI_BASE_URL`, a fake key, `security.auth.selectedType`
 * `openai`) and its telemetry goes, as OTLP/HTTP JSON, to an endpoint on loopback (a real
 * `rotscope serve`): set by `QWEN_TELEMETRY_*` variables, or by `rotscope qwen install` itself run
 * in the CLI's HOME (`viaInstall`). The environment is built from nothing, HOME is a temp dir, the
 * test network guard is preloaded into the CLI, and where `unshare -n` works it runs in a private
 * network namespace whose only interface is loopback, reaching the fake API and the OTLP endpoint
 * through Unix sockets relayed to 127.0.0.1 ports inside (test/helpers/loopback-relay.mjs).
 *
 * Where the CLI is (`.ci/run` installs it there): `$ROTSCOPE_QWEN_CODE_HOME` (default
 * `~/.cache/qwen-code-0.24.4/`), an npm folder holding `@qwen-code/qwen-code@0.24.4`.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { mergeDeep, relayToTcp, runRelayed } from './private-network.ts';
import { startFakeOpenAiChat, type ChatScript, type FakeOpenAiChat } from './fake-openai-chat.ts';

const GUARD = fileURLToPath(new URL('./network-guard.mjs', import.meta.url));
const ROTSCOPE_BIN = fileURLToPath(new URL('../../bin/rotscope.js', import.meta.url));

/** The Qwen Code version the real-CLI scenarios are verified on. */
export const QWEN_CODE_VERSION = '0.24.4';

/** The npm folder the CLI is installed in: `$ROTSCOPE_QWEN_CODE_HOME`, else the cache folder. */
export function qwenCodeHome(): string {
  return (
    process.env.ROTSCOPE_QWEN_CODE_HOME ||
    join(homedir(), '.cache', `qwen-code-${QWEN_CODE_VERSION}`)
  );
}

export const QWEN_INSTALL_HINT =
  `the real Qwen Code ${QWEN_CODE_VERSION} is not installed: run .ci/run, or ` +
  `mkdir -p ${qwenCodeHome()} && cd ${qwenCodeHome()} && npm init -y && ` +
  `npm i --save-exact @qwen-code/qwen-code@${QWEN_CODE_VERSION} ` +
  `(or set ROTSCOPE_QWEN_CODE_HOME to such a folder)`;

/** The CLI's entry script (`cli-entry.js`) when that exact version is installed, else null. */
export function qwenCodeEntry(): string | null {
  const pkg = join(qwenCodeHome(), 'node_modules/@qwen-code/qwen-code');
  try {
    const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as {
      version?: string;
    };
    if (manifest.version !== QWEN_CODE_VERSION) return null;
  } catch {
    return null;
  }
  const entry = join(pkg, 'cli-entry.js');
  return existsSync(entry) ? entry : null;
}

/** Settings that keep the CLI quiet and local (merged under the scenario's own settings). */
const OFFLINE_SETTINGS = {
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  privacy: { usageStatisticsEnabled: false },
  security: { auth: { selectedType: 'openai' } },
};

export interface QwenSessionOptions {
  entry: string;
  script: ChatScript;
  /** Where telemetry goes, e.g. `http://127.0.0.1:4318` (a rotscope server). */
  otlpUrl: string;
  model?: string;
  /** Telemetry set up by `rotscope qwen install` (run before each run, in the CLI's HOME). */
  viaInstall?: boolean;
  /** More `~/.qwen/settings.json` keys (deep-merged over the offline ones). */
  settings?: Record<string, unknown>;
  /** Files to create in the work dir (the CLI's cwd). */
  files?: Record<string, string>;
}

export interface QwenRunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** The session id of the run (`--output-format json` prints it). */
  sessionId: string | null;
}

export interface QwenSession {
  api: FakeOpenAiChat;
  /** Runs `qwen PROMPT`; `resume` continues the latest session (`--continue`). */
  run(prompt: string, options?: { resume?: boolean }): Promise<QwenRunResult>;
  close(): Promise<void>;
}

/** Starts a fake API and an OTLP relay for one Qwen Code session (one or more runs). */
export async function startQwenSession(options: QwenSessionOptions): Promise<QwenSession> {
  const root = mkdtempSync(join(tmpdir(), 'rotscope-qwen-'));
  const workDir = join(root, 'work');
  const homeDir = join(root, 'home');
  const tmpDir = join(root, 'tmp');
  for (const d of [workDir, homeDir, tmpDir, join(homeDir, '.qwen')]) mkdirSync(d);
  for (const [name, text] of Object.entries(options.files ?? {}))
    writeFileSync(join(workDir, name), text);
  const model = options.model ?? 'qwen3-coder-plus';
  const settings = mergeDeep(
    mergeDeep(OFFLINE_SETTINGS, { model: { name: model } }),
    options.settings ?? {},
  );
  const apiSocket = join(root, 'api.sock');
  const otlpSocket = join(root, 'otlp.sock');
  const api = await startFakeOpenAiChat(options.script, { socketPath: apiSocket }, workDir);
  const otlpRelay = await relayToTcp(otlpSocket, new URL(options.otlpUrl));

  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    HOME: homeDir,
    TMPDIR: tmpDir,
    CI: '1',
    NODE_OPTIONS: `--import=${pathToFileURL(GUARD).href}`,
    OPENAI_API_KEY: 'sk-fake-qwen-test-key',
    OPENAI_BASE_URL: 'http://127.0.0.1:{{api}}/v1',
    OPENAI_MODEL: model,
    OTEL_BSP_SCHEDULE_DELAY: '500',
    OTEL_BLRP_SCHEDULE_DELAY: '500',
    ...(options.viaInstall
      ? {}
      : {
          QWEN_TELEMETRY_ENABLED: 'true',
          QWEN_TELEMETRY_TARGET: 'local',
          QWEN_TELEMETRY_OTLP_ENDPOINT: 'http://127.0.0.1:{{otlp}}',
          QWEN_TELEMETRY_OTLP_PROTOCOL: 'http',
          QWEN_TELEMETRY_LOG_PROMPTS: 'true',
        }),
  };
  return {
    api,
    async run(prompt, runOptions = {}) {
      const args = [prompt, '-m', model, '--approval-mode', 'yolo', '--output-format', 'json'];
      if (runOptions.resume) args.push('--continue');
      // the relayed ports are only known inside: settings.json is written there (and rotscope's
      // install run there), just before the CLI
      const install = options.viaInstall
        ? ' && "$0" "$ROTSCOPE_BIN" qwen install --url "http://127.0.0.1:$OTLP_PORT" >/dev/null'
        : '';
      const spec = JSON.stringify({
        forwards: { api: apiSocket, otlp: otlpSocket },
        env: {
          ...env,
          QWEN_SETTINGS: JSON.stringify(settings, null, 2),
          OTLP_PORT: '{{otlp}}',
          ROTSCOPE_BIN,
          ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
        },
        cmd: [
          'sh',
          '-c',
          `printf "%s" "$QWEN_SETTINGS" > "$HOME/.qwen/settings.json"${install} && unset QWEN_SETTINGS OTLP_PORT ROTSCOPE_BIN ROTSCOPE_FROM_SOURCE && exec "$0" "$@"`,
          process.execPath,
          options.entry,
          ...args,
        ],
        cwd: workDir,
      });
      const { exitCode, stdout, stderr } = await runRelayed(spec, {
        path: env.PATH!,
        timeoutMs: 150_000,
      });
      const id = /"session_id":"([^"]+)"/.exec(stdout)?.[1];
      return { exitCode, stdout, stderr, sessionId: id ?? null };
    },
    async close() {
      await api.close();
      await new Promise<void>((done) => otlpRelay.close(() => done()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
