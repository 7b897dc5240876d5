/**
 * Runs the real Claude Code CLI (a native binary installed outside the project's dependencies,
 * one cache folder per version: every version in test/e2e/claude-code-real/versions.json) offline:
 * its model is test/helpers/fake-anthropic.ts and its telemetry goes to an OTLP endpoint on
 * loopback (a real `rotscope serve`).
 *
 * The binary is not a Node process, so no Node-level guard can keep it off the network. It runs
 * with an environment built from nothing (no variable inherited), non-essential traffic and the
 * auto-updater off, HOME and CLAUDE_CONFIG_DIR in a temp dir, and, where `unshare -n` works (root
 * or user namespaces), in a private network namespace whose only interface is loopback: the
 * fake API and the OTLP endpoint are reached through Unix sockets relayed to 127.0.0.1 ports
 * inside it (test/helpers/loopback-relay.mjs). Without `unshare` the same relay runs in the
 * host's namespace and only the environment holds the binary back (`isolated: false`).
 *
 * Where the binaries are (`.ci/run` and `npm run capture:claude-code` install them there):
 * - `$ROTSCOPE_CLAUDE_CODE_HOME/claude-code-<version>/` (default `~/.cache/claude-code-<version>/`),
 *   an npm folder holding `@anthropic-ai/claude-code@<version>` and its native binary package;
 * - `ROTSCOPE_CLAUDE_CODE_BIN_<version with _ for .>` (e.g. `ROTSCOPE_CLAUDE_CODE_BIN_2_1_332`)
 *   names one version's binary directly instead.
 */
import { spawnSync } from 'node:child_process';
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
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { relayToTcp, runRelayed } from './private-network.ts';
import { startFakeAnthropic, type FakeAnthropic, type FakeScript } from './fake-anthropic.ts';

const VERSIONS_FILE = fileURLToPath(
  new URL('../e2e/claude-code-real/versions.json', import.meta.url),
);

/**
 * The Claude Code versions the real-CLI scenarios are verified on, oldest first: the first is
 * the oldest rotscope supports, the last the newest verified (test/e2e/claude-code-real/versions.json).
 */
export const VERIFIED_CLAUDE_CODE_VERSIONS: readonly string[] = Object.freeze(
  (JSON.parse(readFileSync(VERSIONS_FILE, 'utf8')) as { verified: string[] }).verified,
);
export const OLDEST_SUPPORTED_CLAUDE_CODE = VERIFIED_CLAUDE_CODE_VERSIONS[0]!;
export const NEWEST_VERIFIED_CLAUDE_CODE = VERIFIED_CLAUDE_CODE_VERSIONS.at(-1)!;

/**
 * The versions the real-CLI test runs: `ROTSCOPE_CLAUDE_CODE_VERSIONS` (comma or space
 * separated, e.g. to try a new release before verifying it), else every verified one.
 */
export function claudeCodeVersionsToTest(): string[] {
  const asked = (process.env.ROTSCOPE_CLAUDE_CODE_VERSIONS ?? '').split(/[\s,]+/).filter(Boolean);
  return asked.length > 0 ? asked : [...VERIFIED_CLAUDE_CODE_VERSIONS];
}

/**
 * The folder all versions are installed under: `$ROTSCOPE_CLAUDE_CODE_HOME`, else `~/.cache`.
 * A value that names one version's folder (`.../claude-code-2.1.197`, what the variable meant
 * when only one version was tested) stands for its parent.
 */
export function claudeCodeCacheDir(): string {
  const home = process.env.ROTSCOPE_CLAUDE_CODE_HOME;
  if (!home) return join(homedir(), '.cache');
  return /^claude-code-\d+\.\d+\.\d+/.test(basename(home)) ? dirname(home) : home;
}

/** One version's npm folder: `<cache dir>/claude-code-<version>`. */
export function claudeCodeHome(version: string): string {
  return join(claudeCodeCacheDir(), `claude-code-${version}`);
}

/** The package that holds the native binary on this platform, e.g. `claude-code-linux-x64`. */
const NATIVE_PACKAGE = `@anthropic-ai/claude-code-${process.platform}-${process.arch}`;

/** The per-version override variable, e.g. `ROTSCOPE_CLAUDE_CODE_BIN_2_1_332`. */
export const binaryOverrideVariable = (version: string) =>
  `ROTSCOPE_CLAUDE_CODE_BIN_${version.replace(/[^0-9A-Za-z]/g, '_')}`;

/** The version of `@anthropic-ai/claude-code` installed in a version's folder, or null. */
export function installedClaudeCodeVersion(version: string): string | null {
  try {
    const manifest = join(
      claudeCodeHome(version),
      'node_modules/@anthropic-ai/claude-code/package.json',
    );
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}

/** How to install one version, for skip and failure messages. */
export function installHint(version: string): string {
  const home = claudeCodeHome(version);
  return (
    `the real Claude Code CLI ${version} is not installed: run ` +
    `\`npm run capture:claude-code -- --install-only ${version}\` (or .ci/run), or ` +
    `mkdir -p ${home} && cd ${home} && npm init -y && ` +
    `npm i --save-exact @anthropic-ai/claude-code@${version} ` +
    `(or set ${binaryOverrideVariable(version)} to its binary)`
  );
}

/**
 * A version's binary: `$ROTSCOPE_CLAUDE_CODE_BIN_<version>`, else its cache folder's (when that
 * folder really holds this version); null when there is none.
 */
export function claudeCodeBinary(version: string): string | null {
  const override = process.env[binaryOverrideVariable(version)];
  if (override) return existsSync(override) ? override : null;
  const binary = join(claudeCodeHome(version), 'node_modules', NATIVE_PACKAGE, 'claude');
  return existsSync(binary) && installedClaudeCodeVersion(version) === version ? binary : null;
}

/**
 * Installs one version into its cache folder with npm (the only step that needs the registry),
 * unless it is there already; returns the binary. Not for tests: `.ci/run` and the capture
 * script call it before anything runs.
 */
export function installClaudeCode(version: string, log: (line: string) => void): string {
  const found = claudeCodeBinary(version);
  if (found) return found;
  if (!/^\d+\.\d+\.\d+([-.][0-9A-Za-z.]+)?$/.test(version))
    throw new Error(`not a Claude Code version: ${JSON.stringify(version)}`);
  const home = claudeCodeHome(version);
  log(`installing @anthropic-ai/claude-code@${version} into ${home}`);
  mkdirSync(home, { recursive: true });
  if (!existsSync(join(home, 'package.json')))
    writeFileSync(
      join(home, 'package.json'),
      JSON.stringify({ name: `claude-code-${version}`, private: true }, null, 2) + '\n',
    );
  // a plain npm: no NODE_OPTIONS (the test network guard would refuse the registry)
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const npm = spawnSync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--save-exact', `@anthropic-ai/claude-code@${version}`],
    { cwd: home, env, stdio: 'inherit' },
  );
  if (npm.status !== 0) throw new Error(`npm install of Claude Code ${version} failed`);
  const binary = claudeCodeBinary(version);
  if (!binary)
    throw new Error(
      `installed Claude Code ${version} into ${home}, but found no ${NATIVE_PACKAGE}/claude there`,
    );
  return binary;
}

export interface SessionOptions {
  binary: string;
  script: FakeScript;
  /** Where telemetry goes, e.g. `http://127.0.0.1:4318` (a rotscope server). */
  otlpUrl: string;
  protocol?: 'http/json' | 'http/protobuf';
  /** Detailed beta tracing (traces and logs then go, as http/json, to the beta endpoint only). */
  betaTracing?: boolean;
  model?: string;
  /** Files to create in the work dir (the CLI's cwd). */
  files?: Record<string, string>;
  env?: Record<string, string>;
  /** The user settings (`$CLAUDE_CONFIG_DIR/settings.json`), e.g. hooks; `{{root}}` is the session's temp dir. */
  settings?: Record<string, unknown>;
}

export interface RunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** The session id the CLI printed (`--output-format json`). */
  sessionId: string | null;
  isolated: boolean;
}

export interface ClaudeCodeSession {
  workDir: string;
  configDir: string;
  api: FakeAnthropic;
  /** Runs `claude -p PROMPT`; `resume` continues this session's last run (`--resume <id>`). */
  run(prompt: string, options?: { resume?: boolean; maxTurns?: number }): Promise<RunResult>;
  /** The transcript files the CLI wrote (main session files and sub-agent files). */
  transcripts(): string[];
  close(): Promise<void>;
}

function listJsonl(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listJsonl(p));
    else if (entry.name.endsWith('.jsonl')) out.push(p);
  }
  return out.sort();
}

/** Starts a fake API and an OTLP relay for one Claude Code session (one or more runs). */
export async function startClaudeCodeSession(options: SessionOptions): Promise<ClaudeCodeSession> {
  const root = mkdtempSync(join(tmpdir(), 'rotscope-cc-'));
  const workDir = join(root, 'work');
  const configDir = join(root, 'config');
  const homeDir = join(root, 'home');
  // its temp files too (2.1.332 writes background agents' output under $TMPDIR/claude-<uid>/)
  const tmpDir = join(root, 'tmp');
  for (const d of [workDir, configDir, homeDir, tmpDir]) mkdirSync(d);
  for (const [name, text] of Object.entries(options.files ?? {})) {
    mkdirSync(dirname(join(workDir, name)), { recursive: true }); // `src/index.ts` too
    writeFileSync(join(workDir, name), text);
  }
  if (options.settings)
    writeFileSync(
      join(configDir, 'settings.json'),
      JSON.stringify(options.settings).split('{{root}}').join(root),
    );
  const apiSocket = join(root, 'api.sock');
  const otlpSocket = join(root, 'otlp.sock');
  const api = await startFakeAnthropic(options.script, { socketPath: apiSocket }, workDir);
  const otlpRelay = await relayToTcp(otlpSocket, new URL(options.otlpUrl));
  let sessionId: string | null = null;

  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    HOME: homeDir,
    TMPDIR: tmpDir,
    CLAUDE_CONFIG_DIR: configDir,
    ANTHROPIC_BASE_URL: 'http://127.0.0.1:{{api}}',
    ANTHROPIC_API_KEY: 'sk-fake-test-key',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1', // Anthropic's own usage telemetry; OTel export below is separate
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_ENABLE_TELEMETRY: '1',
    CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: '1',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_LOGS_EXPORTER: 'otlp',
    OTEL_METRICS_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: options.protocol ?? 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:{{otlp}}',
    OTEL_TRACES_EXPORT_INTERVAL: '500',
    OTEL_LOGS_EXPORT_INTERVAL: '500',
    OTEL_METRIC_EXPORT_INTERVAL: '1000',
    OTEL_LOG_TOOL_DETAILS: '1',
    CLAUDE_CODE_OTEL_SHUTDOWN_TIMEOUT_MS: '5000',
    ...(options.betaTracing
      ? { ENABLE_BETA_TRACING_DETAILED: '1', BETA_TRACING_ENDPOINT: 'http://127.0.0.1:{{otlp}}' }
      : {}),
    ...options.env,
  };

  return {
    workDir,
    configDir,
    api,
    async run(prompt, runOptions = {}) {
      const args = ['-p', prompt, '--max-turns', String(runOptions.maxTurns ?? 12)];
      args.push(
        '--output-format',
        'json',
        '--allowedTools',
        'Bash,Read,Write,Edit,Glob,Grep,Agent,Task',
      );
      if (options.model) args.push('--model', options.model);
      if (runOptions.resume) {
        if (sessionId === null)
          throw new Error('nothing to resume: no earlier run printed a session id');
        args.push('--resume', sessionId);
      }
      const spec = JSON.stringify({
        forwards: { api: apiSocket, otlp: otlpSocket },
        env,
        cmd: [options.binary, ...args],
        cwd: workDir,
      });
      const { exitCode, stdout, stderr, isolated } = await runRelayed(spec, {
        path: env.PATH!,
        timeoutMs: 120_000,
      });
      try {
        const result = JSON.parse(stdout.trim().split('\n').pop() ?? '') as { session_id?: string };
        if (typeof result.session_id === 'string') sessionId = result.session_id;
      } catch {
        // not JSON: the caller sees stdout and stderr
      }
      return { exitCode, stdout, stderr, sessionId, isolated };
    },
    transcripts: () => listJsonl(join(configDir, 'projects')),
    async close() {
      await api.close();
      await new Promise<void>((done) => otlpRelay.close(() => done()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
