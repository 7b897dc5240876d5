/**
 * Runs a small application on the REAL Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`,
 * installed outside the project's dependencies; test/e2e/claude-agent-sdk-real/app.mjs) offline:
 * `query()` spawns the SDK's bundled Claude Code binary, whose model is the loopback fake
 * Messages API (test/helpers/fake-anthropic.ts) and whose telemetry (the CLI's own: the SDK adds
 * none) goes as OTLP/HTTP JSON to an endpoint on loopback (a real `rotscope serve`), switched on
 * by the environment variables README.md names for Agent SDK apps.
 *
 * The app runs with an environment built from nothing, HOME and CLAUDE_CONFIG_DIR in a temp dir,
 * and, where `unshare -n` works, in a private network namespace whose only interface is loopback,
 * reaching the fake API and the OTLP endpoint through Unix sockets relayed to 127.0.0.1 ports
 * inside (test/helpers/loopback-relay.mjs), as the Claude Code and Gemini CLI helpers do.
 *
 * Where the SDK is (`.ci/run` installs it there): `$ROTSCOPE_CLAUDE_AGENT_SDK_HOME` (default
 * `~/.cache/claude-agent-sdk-0.3.336/`), an npm folder holding `@anthropic-ai/claude-agent-sdk`.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeAnthropic, type FakeAnthropic, type FakeScript } from './fake-anthropic.ts';
import { relayToTcp, runRelayed } from './private-network.ts';

const APP = fileURLToPath(new URL('../e2e/claude-agent-sdk-real/app.mjs', import.meta.url));

/** The Agent SDK version the real-SDK scenarios are verified on (it bundles Claude Code 2.1.336). */
export const CLAUDE_AGENT_SDK_VERSION = '0.3.336';

/** The npm folder the SDK is installed in: `$ROTSCOPE_CLAUDE_AGENT_SDK_HOME`, else the cache folder. */
export function claudeAgentSdkHome(): string {
  return (
    process.env.ROTSCOPE_CLAUDE_AGENT_SDK_HOME ||
    join(homedir(), '.cache', `claude-agent-sdk-${CLAUDE_AGENT_SDK_VERSION}`)
  );
}

export const CLAUDE_AGENT_SDK_INSTALL_HINT =
  `the real Claude Agent SDK ${CLAUDE_AGENT_SDK_VERSION} is not installed: run .ci/run, or ` +
  `mkdir -p ${claudeAgentSdkHome()} && cd ${claudeAgentSdkHome()} && npm init -y && ` +
  `npm i --save-exact @anthropic-ai/claude-agent-sdk@${CLAUDE_AGENT_SDK_VERSION} ` +
  `(or set ROTSCOPE_CLAUDE_AGENT_SDK_HOME to such a folder)`;

/** The SDK's package folder when that exact version (and its native binary) is installed, else null. */
export function claudeAgentSdkPackage(): string | null {
  const pkg = join(claudeAgentSdkHome(), 'node_modules/@anthropic-ai/claude-agent-sdk');
  try {
    const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as {
      version?: string;
    };
    if (manifest.version !== CLAUDE_AGENT_SDK_VERSION) return null;
  } catch {
    return null;
  }
  const binary = join(
    claudeAgentSdkHome(),
    'node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude',
  );
  return existsSync(join(pkg, 'sdk.mjs')) && existsSync(binary) ? pkg : null;
}

/** What the app is built with (app.mjs): its model, tools, sub-agents and MCP tools. */
export interface AgentSdkApp {
  model?: string;
  maxTurns?: number;
  allowedTools?: string[];
  /** Sub-agents defined in code (`options.agents`). */
  agents?: Record<string, { description: string; prompt: string; tools?: string[] }>;
  /** Tools of an in-process MCP server (`createSdkMcpServer`), each answering `resultBytes` of log lines. */
  mcpTools?: Array<{ server: string; name: string; resultBytes: number }>;
}

export interface AgentSdkSessionOptions {
  /** The SDK's package folder ({@link claudeAgentSdkPackage}). */
  sdk: string;
  script: FakeScript;
  /** Where telemetry goes, e.g. `http://127.0.0.1:4318` (a rotscope server). */
  otlpUrl: string;
  app: AgentSdkApp;
  /** Files to create in the work dir (the app's cwd). */
  files?: Record<string, string>;
}

/** One `query()` of the app, as it printed it. */
export interface AgentSdkQuery {
  sessionId: string | null;
  subtype: string | null;
  turns: number | null;
  compactBoundaries: number;
  /** `modelUsage[model].contextWindow` of the `result` message. */
  contextWindow: number | null;
  error: string | null;
}

export interface AgentSdkRunResult {
  exitCode: number | null;
  queries: AgentSdkQuery[];
  stdout: string;
  stderr: string;
  isolated: boolean;
}

/**
 * The environment that turns on an Agent SDK app's telemetry (README "Claude Agent SDK"): the
 * SDK passes its environment to the Claude Code binary it spawns, whose telemetry it is.
 */
export const AGENT_SDK_TELEMETRY_ENV: Readonly<Record<string, string>> = Object.freeze({
  CLAUDE_CODE_ENABLE_TELEMETRY: '1',
  CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: '1',
  OTEL_TRACES_EXPORTER: 'otlp',
  OTEL_LOGS_EXPORTER: 'otlp',
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_LOG_TOOL_DETAILS: '1',
});

/**
 * Runs the app once (one process, one `query()` per run; `resume` continues the session of the
 * first run) against a fresh fake API, its telemetry to `otlpUrl`.
 */
export async function runAgentSdkApp(
  options: AgentSdkSessionOptions,
  runs: Array<{ prompt: string; resume?: boolean }>,
): Promise<AgentSdkRunResult & { api: FakeAnthropic['requests'] }> {
  const root = mkdtempSync(join(tmpdir(), 'rotscope-agent-sdk-'));
  const workDir = join(root, 'work');
  const configDir = join(root, 'config');
  const homeDir = join(root, 'home');
  const tmpDir = join(root, 'tmp');
  for (const d of [workDir, configDir, homeDir, tmpDir]) mkdirSync(d);
  for (const [name, text] of Object.entries(options.files ?? {}))
    writeFileSync(join(workDir, name), text);
  const apiSocket = join(root, 'api.sock');
  const otlpSocket = join(root, 'otlp.sock');
  const api = await startFakeAnthropic(options.script, { socketPath: apiSocket }, workDir);
  const otlpRelay = await relayToTcp(otlpSocket, new URL(options.otlpUrl));
  try {
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
      DISABLE_TELEMETRY: '1', // Anthropic's own usage telemetry; the OTel export is separate
      DISABLE_ERROR_REPORTING: '1',
      ...AGENT_SDK_TELEMETRY_ENV,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:{{otlp}}',
      OTEL_TRACES_EXPORT_INTERVAL: '500',
      OTEL_LOGS_EXPORT_INTERVAL: '500',
      OTEL_METRICS_EXPORTER: 'none',
      CLAUDE_CODE_OTEL_SHUTDOWN_TIMEOUT_MS: '5000',
    };
    const spec = JSON.stringify({
      forwards: { api: apiSocket, otlp: otlpSocket },
      env,
      cmd: [process.execPath, APP, JSON.stringify({ sdk: options.sdk, ...options.app, runs })],
      cwd: workDir,
    });
    const { exitCode, stdout, stderr, isolated } = await runRelayed(spec, {
      path: env.PATH!,
      timeoutMs: 150_000,
    });
    const queries: AgentSdkQuery[] = [];
    for (const line of stdout.split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        queries.push(JSON.parse(line) as AgentSdkQuery);
      } catch {
        // not the app's line: the caller sees stdout
      }
    }
    return { exitCode, queries, stdout, stderr, isolated, api: api.requests };
  } finally {
    await api.close();
    await new Promise<void>((done) => otlpRelay.close(() => done()));
    rmSync(root, { recursive: true, force: true });
  }
}
