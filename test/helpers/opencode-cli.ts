/**
 * Runs the real OpenCode (`opencode-ai`, a Bun-compiled binary installed outside the project's
 * dependencies) offline: its model is test/helpers/fake-opencode-api.ts (a custom
 * OpenAI-compatible provider `fake` in its opencode.json, model `gpt-4o` with the limits
 * models.dev gives gpt-4o: 128,000 context, 16,384 output) and its telemetry goes, as OTLP/HTTP
 * JSON, to an endpoint on loopback (a real `rotscope serve`): `OTEL_EXPORTER_OTLP_ENDPOINT` and
 * `experimental.openTelemetry` set by the test, or by `rotscope opencode install` itself run in
 * OpenCode's HOME (`viaInstall`: its opencode.json key, and the profile lines it prints, eval'ed).
 *
 * It runs with an environment built from nothing, HOME and the XDG folders in a temp dir, model
 * fetches, auto-update, LSP downloads, default plugins and sharing off; where `unshare -n` works
 * in a private network namespace whose only interface is loopback, reaching the fake API and the
 * OTLP endpoint through Unix sockets relayed to 127.0.0.1 ports inside
 * (test/helpers/loopback-relay.mjs). OpenCode is not Node: the network guard cannot be preloaded.
 *
 * Where it is (`.ci/run` installs it there): `$ROTSCOPE_OPENCODE_HOME` (default
 * `~/.cache/opencode-1.18.33/`), an npm folder holding `opencode-ai@1.18.33`.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { relayToTcp, runRelayed } from './private-network.ts';
import {
  startFakeOpenCodeApi,
  type FakeOpenCodeApi,
  type OpenCodeScript,
} from './fake-opencode-api.ts';

const ROTSCOPE_BIN = fileURLToPath(new URL('../../bin/rotscope.js', import.meta.url));

/** The OpenCode version the real-CLI scenarios are verified on. */
export const OPENCODE_VERSION = '1.18.33';

/** The npm folder OpenCode is installed in: `$ROTSCOPE_OPENCODE_HOME`, else the cache folder. */
export function openCodeHome(): string {
  return (
    process.env.ROTSCOPE_OPENCODE_HOME || join(homedir(), '.cache', `opencode-${OPENCODE_VERSION}`)
  );
}

export const OPENCODE_INSTALL_HINT =
  `the real OpenCode ${OPENCODE_VERSION} is not installed: run .ci/run, or ` +
  `mkdir -p ${openCodeHome()} && cd ${openCodeHome()} && npm init -y && ` +
  `npm i --save-exact opencode-ai@${OPENCODE_VERSION} ` +
  `(or set ROTSCOPE_OPENCODE_HOME to such a folder)`;

/** The OpenCode binary when that exact version is installed (linux x64), else null. */
export function openCodeBinary(): string | null {
  const modules = join(openCodeHome(), 'node_modules');
  try {
    const manifest = JSON.parse(
      readFileSync(join(modules, 'opencode-ai/package.json'), 'utf8'),
    ) as { version?: string };
    if (manifest.version !== OPENCODE_VERSION) return null;
  } catch {
    return null;
  }
  // the baseline build needs no AVX2
  for (const pkg of ['opencode-linux-x64-baseline', 'opencode-linux-x64']) {
    const bin = join(modules, pkg, 'bin/opencode');
    if (existsSync(bin)) return bin;
  }
  return null;
}

export interface OpenCodeSessionOptions {
  binary: string;
  script: OpenCodeScript;
  /** Where telemetry goes, e.g. `http://127.0.0.1:4318` (a rotscope server). */
  otlpUrl: string;
  /** Telemetry set up by `rotscope opencode install` (with `token` if given), run before each run. */
  viaInstall?: { token?: string };
  /** `--title` of each run (default a fixed one); null lets OpenCode's title generator name the session. */
  title?: string | null;
  /** More opencode.json keys (shallow-merged over the test's). */
  config?: Record<string, unknown>;
  /** Files to create in the work dir (OpenCode's cwd). */
  files?: Record<string, string>;
  env?: Record<string, string>;
}

export interface OpenCodeRunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** The session id of the run (`--format json` events carry it). */
  sessionId: string | null;
  isolated: boolean;
}

export interface OpenCodeSession {
  workDir: string;
  api: FakeOpenCodeApi;
  /** Runs `opencode run PROMPT`; `resume` continues the last session (`--continue`). */
  run(prompt: string, options?: { resume?: boolean }): Promise<OpenCodeRunResult>;
  close(): Promise<void>;
}

/**
 * The batch delay of OpenCode's span exporter in these tests (its default is 5 s; `opencode run`
 * drops what is not sent when it exits): the one `rotscope opencode install` prints.
 */
const BATCH_DELAY_MS = '100';

/**
 * How each run is made (a `sh -c` script; `$0` is the binary, `$@` `run` and its arguments): an
 * `opencode serve` on a free loopback port, the run attached to it (`opencode run --attach`), then
 * the server is given a moment to export and stopped. `opencode run` alone exits before its
 * exporter sends the last spans (../shared/agents.md "Lossy at exit"; on a quiet machine it lost
 * the compaction scenario's last two calls in every run): a served OpenCode, like its TUI, is a
 * process that outlives the model calls, so what it exports is all it made. The model calls and
 * their spans are the server's; the attached run prints the same `--format json` events.
 */
const SERVE_AND_ATTACH = [
  `port=$("$NODE" -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")`,
  `unset OPENCODE_CONFIG_JSON OTLP_PORT ROTSCOPE_BIN ROTSCOPE_FROM_SOURCE ROTSCOPE_INSTALL_TOKEN`,
  `"$0" serve --hostname 127.0.0.1 --port "$port" >"$HOME/serve.log" 2>&1 & server=$!`,
  // wait (up to 60 s) until it answers
  `"$NODE" -e "const net=require('net');const t=Date.now();(function go(){const c=net.connect(+process.argv[1],'127.0.0.1',()=>{c.end();process.exit(0)});c.on('error',()=>Date.now()-t>60000?process.exit(1):setTimeout(go,100))})()" "$port"`,
  // "$1" is `run`: the rest are its arguments
  `shift; "$0" run --attach "http://127.0.0.1:$port" "$@"; code=$?`,
  // the attached run may print no event of a short run: the server's sessions say its id
  `"$NODE" -e "fetch('http://127.0.0.1:'+process.argv[1]+'/session').then(r=>r.text()).then(t=>console.log('sessions: '+t))" "$port"`,
  // the last spans go out within the batch delay (100 ms) of the run's end
  `sleep 2; kill "$server"; wait "$server"; exit $code`,
].join('\n');

/** Starts a fake API and an OTLP relay for one OpenCode session (one or more runs). */
export async function startOpenCodeSession(
  options: OpenCodeSessionOptions,
): Promise<OpenCodeSession> {
  const root = mkdtempSync(join(tmpdir(), 'rotscope-opencode-'));
  const workDir = join(root, 'work');
  const homeDir = join(root, 'home');
  for (const d of [workDir, homeDir, join(homeDir, '.config/opencode')])
    mkdirSync(d, { recursive: true });
  for (const [name, text] of Object.entries(options.files ?? {}))
    writeFileSync(join(workDir, name), text);
  const apiSocket = join(root, 'api.sock');
  const otlpSocket = join(root, 'otlp.sock');
  const api = await startFakeOpenCodeApi(options.script, { socketPath: apiSocket }, workDir);
  const otlpRelay = await relayToTcp(otlpSocket, new URL(options.otlpUrl));
  const config = {
    $schema: 'https://opencode.ai/config.json',
    model: 'fake/gpt-4o',
    small_model: 'fake/gpt-4o',
    autoupdate: false,
    share: 'disabled',
    ...(options.viaInstall ? {} : { experimental: { openTelemetry: true } }),
    provider: {
      fake: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Fake OpenAI-compatible',
        options: { baseURL: 'http://127.0.0.1:{{api}}/v1', apiKey: 'sk-fake-opencode' },
        models: {
          'gpt-4o': {
            name: 'gpt-4o',
            tool_call: true,
            limit: { context: 128_000, output: 16_384 },
          },
        },
      },
    },
    ...options.config,
  };
  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    HOME: homeDir,
    XDG_CONFIG_HOME: join(homeDir, '.config'),
    XDG_DATA_HOME: join(homeDir, '.local/share'),
    XDG_CACHE_HOME: join(homeDir, '.cache'),
    XDG_STATE_HOME: join(homeDir, '.local/state'),
    OPENCODE_DISABLE_AUTOUPDATE: 'true',
    OPENCODE_DISABLE_MODELS_FETCH: 'true',
    OPENCODE_DISABLE_LSP_DOWNLOAD: 'true',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: 'true',
    OPENCODE_DISABLE_SHARE: 'true',
    OPENCODE_DISABLE_CLAUDE_CODE: 'true',
    ...(options.viaInstall
      ? {}
      : {
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:{{otlp}}',
          OTEL_BSP_SCHEDULE_DELAY: BATCH_DELAY_MS,
        }),
    ...options.env,
  };
  const configFile = join(homeDir, '.config/opencode/opencode.json');

  return {
    workDir,
    api,
    async run(prompt, runOptions = {}) {
      const title = options.title === undefined ? 'rotscope test' : options.title;
      const args = [
        'run',
        '--format',
        'json',
        '--auto',
        ...(title === null ? [] : ['--title', title]),
      ];
      if (runOptions.resume) args.push('--continue');
      args.push(prompt);
      // the relayed ports are only known inside: opencode.json is written there (and rotscope's
      // install run there, its printed export lines eval'ed), just before OpenCode
      const install = options.viaInstall
        ? ` && eval "$("$NODE" "$ROTSCOPE_BIN" opencode install --url "http://127.0.0.1:$OTLP_PORT"${
            options.viaInstall.token ? ' --token "$ROTSCOPE_INSTALL_TOKEN"' : ''
          } | sed -n 's/^ *export /export /p')"`
        : '';
      const spec = JSON.stringify({
        forwards: { api: apiSocket, otlp: otlpSocket },
        env: {
          ...env,
          OPENCODE_CONFIG_JSON: JSON.stringify(config, null, 1),
          OTLP_PORT: '{{otlp}}',
          NODE: process.execPath,
          ROTSCOPE_BIN,
          ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
          ROTSCOPE_INSTALL_TOKEN: options.viaInstall?.token ?? '',
        },
        cmd: [
          'sh',
          '-c',
          `printf "%s" "$OPENCODE_CONFIG_JSON" > "${configFile}"${install} && ${SERVE_AND_ATTACH}`,
          options.binary,
          ...args,
        ],
        cwd: workDir,
      });
      const { exitCode, stdout, stderr, isolated } = await runRelayed(spec, {
        path: env.PATH!,
        timeoutMs: 240_000,
      });
      const id =
        /"sessionID"\s*:\s*"(ses_[^"]+)"/.exec(stdout)?.[1] ??
        /^sessions: .*?"id"\s*:\s*"(ses_[^"]+)"/m.exec(stdout)?.[1];
      return { exitCode, stdout, stderr, sessionId: id ?? null, isolated };
    },
    async close() {
      await api.close();
      await new Promise<void>((done) => otlpRelay.close(() => done()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
