/**
 * Runs the real Codex CLI (`@openai/codex`, a native binary installed outside the project's
 * dependencies) offline: its model is test/helpers/fake-openai-responses.ts (a custom
 * `model_provider` with `wire_api = "responses"`) and its telemetry goes, as OTLP/HTTP, to an
 * endpoint on loopback (a real `rotscope serve`), configured in `$CODEX_HOME/config.toml` as
 * conventions §5.0.2 says.
 *
 * The binary is not a Node process, so no Node-level guard can keep it off the network. As the
 * Claude Code one (test/helpers/claude-code-cli.ts), it runs with an environment built from
 * nothing, HOME and CODEX_HOME in a temp dir, and, where `unshare -n` works, in a private network
 * namespace whose only interface is loopback: the fake API and the OTLP endpoint are reached
 * through Unix sockets relayed to 127.0.0.1 ports inside it (test/helpers/loopback-relay.mjs,
 * which also writes the config.toml with those ports). Without `unshare` the same relay runs in
 * the host's namespace and only the environment holds the binary back (`isolated: false`).
 *
 * Where the binary is (`.ci/run` installs it there):
 * - `$ROTSCOPE_CODEX_HOME` (default `~/.cache/codex-0.171.0/`), an npm folder holding
 *   `@openai/codex@0.171.0` and its platform package;
 * - `ROTSCOPE_CODEX_BIN` names the binary directly instead.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { relayToTcp, runRelayed } from './private-network.ts';
import {
  startFakeOpenAiResponses,
  type FakeOpenAiResponses,
  type FakeResponsesScript,
} from './fake-openai-responses.ts';

/** The Codex CLI version the real-CLI scenarios are verified on. */
export const CODEX_VERSION = '0.171.0';

/** The npm folder Codex is installed in: `$ROTSCOPE_CODEX_HOME`, else `~/.cache/codex-<version>`. */
export function codexInstallDir(): string {
  return process.env.ROTSCOPE_CODEX_HOME || join(homedir(), '.cache', `codex-${CODEX_VERSION}`);
}

/** Rust target triples of the platform packages (as `@openai/codex`'s own launcher maps them). */
const TARGETS: Record<string, string> = {
  'linux-x64': 'x86_64-unknown-linux-musl',
  'linux-arm64': 'aarch64-unknown-linux-musl',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
};

/** How to install it, for skip and failure messages. */
export const CODEX_INSTALL_HINT =
  `the real Codex CLI ${CODEX_VERSION} is not installed: run .ci/run, or ` +
  `mkdir -p ${codexInstallDir()} && cd ${codexInstallDir()} && npm init -y && ` +
  `npm i --save-exact @openai/codex@${CODEX_VERSION} (or set ROTSCOPE_CODEX_BIN to its binary)`;

/** The version of `@openai/codex` installed in the install folder, or null. */
export function installedCodexVersion(): string | null {
  try {
    const manifest = join(codexInstallDir(), 'node_modules/@openai/codex/package.json');
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}

/** The binary: `$ROTSCOPE_CODEX_BIN`, else the install folder's (when it holds CODEX_VERSION); null when none. */
export function codexBinary(): string | null {
  const override = process.env.ROTSCOPE_CODEX_BIN;
  if (override) return existsSync(override) ? override : null;
  const key = `${process.platform}-${process.arch}`;
  const target = TARGETS[key];
  if (target === undefined) return null;
  const binary = join(
    codexInstallDir(),
    'node_modules/@openai',
    `codex-${key}`,
    'vendor',
    target,
    'bin/codex',
  );
  return existsSync(binary) && installedCodexVersion() === CODEX_VERSION ? binary : null;
}

export interface CodexSessionOptions {
  binary: string;
  script: FakeResponsesScript;
  /** Where telemetry goes, e.g. `http://127.0.0.1:4318` (a rotscope server). */
  otlpUrl: string;
  /** The OTLP/HTTP encoding (`protocol` in config.toml). Default `binary` (protobuf). */
  protocol?: 'binary' | 'json';
  /** Default `gpt-5.5`. */
  model?: string;
  /** `log_user_prompt` in [otel]. Default false. */
  logUserPrompt?: boolean;
  /** More config.toml, appended before the [otel] section (top-level keys). */
  extraConfig?: string;
  /**
   * The `[otel]` section to use instead of the built-in one (`protocol`, `logUserPrompt`), e.g.
   * what `rotscope codex install --url http://127.0.0.1:{{otlp}}` wrote; `{{otlp}}` is the
   * relayed OTLP port.
   */
  otelToml?: string;
  /** Files to create in the work dir (the CLI's cwd). */
  files?: Record<string, string>;
}

export interface CodexRunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** The thread (= conversation, = session) id from `thread.started` of `--json`. */
  threadId: string | null;
  /** The `--json` events, parsed. */
  events: Array<Record<string, unknown>>;
  isolated: boolean;
}

export interface CodexSession {
  workDir: string;
  codexHome: string;
  api: FakeOpenAiResponses;
  /** Runs `codex exec --skip-git-repo-check --json PROMPT`; `resume` continues this session. */
  run(prompt: string, options?: { resume?: boolean }): Promise<CodexRunResult>;
  /** The session files Codex wrote (`$CODEX_HOME/sessions/** /rollout-*.jsonl`). */
  sessionFiles(): string[];
  close(): Promise<void>;
}

function listRollouts(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listRollouts(p));
    else if (/^rollout-.*\.jsonl$/.test(entry.name)) out.push(p);
  }
  return out.sort();
}

/** config.toml for one run: the fake provider, and telemetry to the relayed OTLP port. */
function configToml(options: CodexSessionOptions): string {
  const protocol = options.protocol ?? 'binary';
  return [
    `model = "${options.model ?? 'gpt-5.5'}"`,
    'model_provider = "fake"',
    // nothing but the fake: no update checks, no analytics, no feedback
    'check_for_update_on_startup = false',
    options.extraConfig ?? '',
    '',
    '[model_providers.fake]',
    'name = "fake"',
    'base_url = "http://127.0.0.1:{{api}}/v1"',
    'wire_api = "responses"',
    'env_key = "FAKE_OPENAI_API_KEY"',
    '',
    '[analytics]',
    'enabled = false',
    '',
    ...(options.otelToml !== undefined
      ? [options.otelToml.trimEnd()]
      : [
          '[otel]',
          `log_user_prompt = ${options.logUserPrompt === true}`,
          `exporter = { otlp-http = { endpoint = "http://127.0.0.1:{{otlp}}/v1/logs", protocol = "${protocol}" } }`,
          `trace_exporter = { otlp-http = { endpoint = "http://127.0.0.1:{{otlp}}/v1/traces", protocol = "${protocol}" } }`,
        ]),
    '',
  ].join('\n');
}

/** Starts a fake API and an OTLP relay for one Codex session (one or more runs). */
export async function startCodexSession(options: CodexSessionOptions): Promise<CodexSession> {
  const root = mkdtempSync(join(tmpdir(), 'rotscope-codex-'));
  const workDir = join(root, 'work');
  const codexHome = join(root, 'codex-home');
  const homeDir = join(root, 'home');
  const tmpDir = join(root, 'tmp');
  for (const d of [workDir, codexHome, homeDir, tmpDir]) mkdirSync(d);
  for (const [name, text] of Object.entries(options.files ?? {}))
    writeFileSync(join(workDir, name), text);
  const apiSocket = join(root, 'api.sock');
  const otlpSocket = join(root, 'otlp.sock');
  const api = await startFakeOpenAiResponses(options.script, { socketPath: apiSocket }, workDir);
  const otlpRelay = await relayToTcp(otlpSocket, new URL(options.otlpUrl));
  let threadId: string | null = null;
  let runs = 0;

  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    HOME: homeDir,
    TMPDIR: tmpDir,
    CODEX_HOME: codexHome,
    FAKE_OPENAI_API_KEY: 'sk-fake-test-key',
  };

  return {
    workDir,
    codexHome,
    api,
    async run(prompt, runOptions = {}) {
      const args = ['exec', '--skip-git-repo-check', '--json'];
      if (runOptions.resume) {
        if (threadId === null)
          throw new Error('nothing to resume: no earlier run started a thread');
        args.push('resume', threadId);
      }
      args.push(prompt);
      const spec = JSON.stringify({
        forwards: { api: apiSocket, otlp: otlpSocket },
        env,
        files: { [join(codexHome, 'config.toml')]: configToml(options) },
        cmd: [options.binary, ...args],
        cwd: workDir,
      });
      // Output goes to files, not pipes: the relay hands its stdout to Codex, and a pipe that
      // Node made non-blocking makes Codex's large `--json` writes fail (EAGAIN, a panic).
      const { exitCode, stdout, stderr, isolated } = await runRelayed(spec, {
        path: env.PATH!,
        timeoutMs: 120_000,
        outputFiles: join(root, `run-${++runs}`),
      });
      const events: Array<Record<string, unknown>> = [];
      for (const line of stdout.split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          events.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          // not an event line
        }
      }
      const started = events.find((e) => e.type === 'thread.started');
      if (typeof started?.thread_id === 'string') threadId = started.thread_id;
      return { exitCode, stdout, stderr, threadId, events, isolated };
    },
    sessionFiles: () => listRollouts(join(codexHome, 'sessions')),
    async close() {
      await api.close();
      await new Promise<void>((done) => otlpRelay.close(() => done()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
