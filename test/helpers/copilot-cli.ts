/**
 * Runs the real GitHub Copilot CLI (`@github/copilot`, a Node single-executable app with a native
 * runtime, installed outside the project's dependencies) offline: BYOK with `COPILOT_OFFLINE=true`
 * against a loopback fake of the OpenAI Chat Completions API (below), its telemetry (OTLP/HTTP
 * JSON, traces) sent to an endpoint on loopback (a real `rotscope serve`), as ../shared/agents.md
 * measured it.
 *
 * The binary is not a plain Node program, so no Node-level guard holds it back: as the Codex one
 * (./codex-cli.ts) it runs with an environment built from nothing, HOME and COPILOT_HOME in a temp
 * dir, and, where `unshare -n` works, in a private network namespace whose only interface is
 * loopback, reaching the fake API and the OTLP endpoint through Unix sockets relayed to 127.0.0.1
 * ports inside (./loopback-relay.mjs).
 *
 * Where the binary is (`.ci/run` installs it there): `$ROTSCOPE_COPILOT_HOME` (default
 * `~/.cache/copilot-1.0.102/`), an npm folder holding `@github/copilot@1.0.102` and its platform
 * package. The app it unpacks on first start goes to `$ROTSCOPE_COPILOT_CACHE` (default
 * `~/.cache/copilot-cache`, `COPILOT_CACHE_HOME`).
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
import { createServer } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listenFake } from './fake-listen.ts';
import { relayToTcp, runRelayed } from './private-network.ts';

const ROTSCOPE_BIN = fileURLToPath(new URL('../../bin/rotscope.js', import.meta.url));

/** The Copilot CLI version the real-CLI scenarios are verified on. */
export const COPILOT_VERSION = '1.0.102';

/** The npm folder Copilot CLI is installed in: `$ROTSCOPE_COPILOT_HOME`, else the cache folder. */
export function copilotInstallDir(): string {
  return (
    process.env.ROTSCOPE_COPILOT_HOME || join(homedir(), '.cache', `copilot-${COPILOT_VERSION}`)
  );
}

/** Where the binary unpacks its app (`COPILOT_CACHE_HOME`). */
export function copilotCacheDir(): string {
  return process.env.ROTSCOPE_COPILOT_CACHE || join(homedir(), '.cache', 'copilot-cache');
}

export const COPILOT_INSTALL_HINT =
  `the real GitHub Copilot CLI ${COPILOT_VERSION} is not installed: run .ci/run, or ` +
  `mkdir -p ${copilotInstallDir()} && cd ${copilotInstallDir()} && npm init -y && ` +
  `npm i --save-exact @github/copilot@${COPILOT_VERSION} (or set ROTSCOPE_COPILOT_HOME to such a folder)`;

/** The platform binary when that exact version is installed, else null. */
export function copilotBinary(): string | null {
  const dir = join(copilotInstallDir(), 'node_modules/@github');
  try {
    const manifest = JSON.parse(readFileSync(join(dir, 'copilot/package.json'), 'utf8')) as {
      version?: string;
    };
    if (manifest.version !== COPILOT_VERSION) return null;
  } catch {
    return null;
  }
  const binary = join(dir, `copilot-${process.platform}-${process.arch}`, 'copilot');
  return existsSync(binary) ? binary : null;
}

// ---- the fake model API (OpenAI Chat Completions, SSE)

/** What the fake reports as usage: fixed input tokens, or the request's bytes / 4 (+ offset). */
export type FakeUsage =
  | { input: number; cached?: number; output?: number }
  | {
      estimate: true;
      offset?: number;
      output?: number;
    };

/** One scripted answer of the main loop. */
export interface CopilotAnswer {
  text?: string;
  /** A tool call; `cutAt` cuts its JSON arguments after that many characters (a cut-off call). */
  toolCall?: { name: string; args: Record<string, unknown>; cutAt?: number };
  /** `stop`, `length`, `tool_calls` (default from the answer). */
  finish?: string;
  usage: FakeUsage;
}

export interface CopilotScript {
  main: CopilotAnswer[];
  /** Answer once the main answers are spent. */
  fallback?: CopilotAnswer;
}

/** One request as the fake saw it. */
export interface CopilotRequest {
  kind: 'main' | 'compact';
  model: string;
  answer: string;
  inputTokens: number;
}

/** Copilot's compaction request (its summary prompt). */
const COMPACT_MARKER = 'create a detailed summary of the conversation so far';

function messageText(m: unknown): string {
  if (!m || typeof m !== 'object') return '';
  const c = (m as { content?: unknown }).content;
  if (typeof c === 'string') return c;
  if (Array.isArray(c))
    return c
      .map((p) => (p && typeof p === 'object' ? String((p as { text?: unknown }).text ?? '') : ''))
      .join('\n');
  return '';
}

export interface FakeCopilotApi {
  requests: CopilotRequest[];
  close(): Promise<void>;
}

/** Starts the fake on a Unix socket (relayed into the CLI's namespace). */
export async function startFakeCopilotApi(
  script: CopilotScript,
  socketPath: string,
  workDir: string,
): Promise<FakeCopilotApi> {
  const queue = [...script.main];
  const requests: CopilotRequest[] = [];
  let ids = 0;
  const newId = (p: string) => `${p}_fake${String(++ids).padStart(4, '0')}`;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      if (req.method === 'GET' && path.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o', object: 'model' }] }));
        return;
      }
      if (req.method !== 'POST' || !path.endsWith('/chat/completions')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
        return;
      }
      const body = JSON.parse(raw || '{}') as { model?: string; messages?: unknown[] };
      const messages = Array.isArray(body.messages) ? body.messages : [];
      const compact = messages.some((m) => messageText(m).includes(COMPACT_MARKER));
      const answer: CopilotAnswer = compact
        ? {
            text: '## Goal\nRead the logs.\n## Progress\nThe logs were read.\n## Next\nReport.',
            usage: { estimate: true, output: 300 },
          }
        : (queue.shift() ?? script.fallback ?? { text: 'All done.', usage: { estimate: true } });
      const u = answer.usage;
      const input =
        'estimate' in u ? Math.max(1, Math.ceil(raw.length / 4) + (u.offset ?? 0)) : u.input;
      const cached = 'estimate' in u ? 0 : (u.cached ?? 0);
      const output = u.output ?? 40;
      const call = answer.toolCall;
      let args = call ? JSON.stringify(call.args).split('__WORK__').join(workDir) : '';
      if (call?.cutAt !== undefined) args = args.slice(0, call.cutAt);
      const finish = answer.finish ?? (call ? 'tool_calls' : 'stop');
      requests.push({
        kind: compact ? 'compact' : 'main',
        model: body.model ?? '',
        answer: `${call ? `${call.name}${call.cutAt !== undefined ? '(cut)' : ''}` : 'text'}/${finish}`,
        inputTokens: input,
      });
      const id = newId('chatcmpl');
      const created = Math.floor(Date.now() / 1000);
      const event = (choices: unknown[], extra: Record<string, unknown> = {}) =>
        res.write(
          `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices, ...extra })}\n\n`,
        );
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      event([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
      if (answer.text !== undefined)
        event([{ index: 0, delta: { content: answer.text }, finish_reason: null }]);
      if (call) {
        const tc = { index: 0, id: newId('call'), type: 'function' };
        event([
          {
            index: 0,
            delta: { tool_calls: [{ ...tc, function: { name: call.name, arguments: args } }] },
            finish_reason: null,
          },
        ]);
      }
      event([{ index: 0, delta: {}, finish_reason: finish }]);
      event([], {
        usage: {
          prompt_tokens: input,
          completion_tokens: output,
          total_tokens: input + output,
          prompt_tokens_details: { cached_tokens: cached },
        },
      });
      res.end('data: [DONE]\n\n');
    });
  });
  const { close } = await listenFake(server, { socketPath });
  return { requests, close };
}

// ---- a session: one or more `copilot -p` runs

export interface CopilotSessionOptions {
  binary: string;
  script: CopilotScript;
  /** Where telemetry goes, e.g. `http://127.0.0.1:4318` (a rotscope server). */
  otlpUrl: string;
  /**
   * Telemetry set up by `rotscope copilot install` (run in the CLI's HOME before each run, with
   * the relayed OTLP URL): its settings.json, and the variables it prints, sourced
   * (`--print-env`), instead of the variables set here.
   */
  viaInstall?: boolean;
  /** Files to create in the work dir (the CLI's cwd). */
  files?: Record<string, string>;
  env?: Record<string, string>;
}

export interface CopilotRunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  isolated: boolean;
}

export interface CopilotSession {
  workDir: string;
  copilotHome: string;
  api: FakeCopilotApi;
  /** Runs `copilot -p PROMPT`; `resume` continues the latest session (`--continue`). */
  run(prompt: string, options?: { resume?: boolean }): Promise<CopilotRunResult>;
  /** The session ids Copilot wrote (`$COPILOT_HOME/session-state/<id>/`). */
  sessionIds(): string[];
  /** The session file of a session (`$COPILOT_HOME/session-state/<id>/events.jsonl`). */
  sessionFile(id: string): string;
  close(): Promise<void>;
}

/** Starts a fake API and an OTLP relay for one Copilot CLI session (one or more runs). */
export async function startCopilotSession(options: CopilotSessionOptions): Promise<CopilotSession> {
  const root = mkdtempSync(join(tmpdir(), 'rotscope-copilot-'));
  const workDir = join(root, 'work');
  const homeDir = join(root, 'home');
  const copilotHome = join(homeDir, '.copilot');
  const tmpDir = join(root, 'tmp');
  for (const d of [workDir, homeDir, copilotHome, tmpDir]) mkdirSync(d, { recursive: true });
  for (const [name, text] of Object.entries(options.files ?? {}))
    writeFileSync(join(workDir, name), text);
  const apiSocket = join(root, 'api.sock');
  const otlpSocket = join(root, 'otlp.sock');
  const api = await startFakeCopilotApi(options.script, apiSocket, workDir);
  const otlpRelay = await relayToTcp(otlpSocket, new URL(options.otlpUrl));
  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    HOME: homeDir,
    TMPDIR: tmpDir,
    XDG_CONFIG_HOME: join(homeDir, '.config'),
    XDG_STATE_HOME: join(homeDir, '.local/state'),
    COPILOT_HOME: copilotHome,
    COPILOT_CACHE_HOME: copilotCacheDir(),
    COPILOT_OFFLINE: 'true',
    COPILOT_AUTO_UPDATE: 'false',
    COPILOT_PROVIDER_BASE_URL: 'http://127.0.0.1:{{api}}/v1',
    COPILOT_PROVIDER_TYPE: 'openai',
    COPILOT_PROVIDER_API_KEY: 'sk-fake-test-key',
    COPILOT_MODEL: 'gpt-4o',
    ...(options.viaInstall
      ? {}
      : {
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:{{otlp}}',
          OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
        }),
    ...options.env,
  };
  let runs = 0;
  return {
    workDir,
    copilotHome,
    api,
    async run(prompt, runOptions = {}) {
      const args = ['-p', prompt, '--allow-all-tools', '--allow-all-paths', '--no-color'];
      if (runOptions.resume) args.push('--continue');
      // the relayed ports are only known inside: rotscope's install runs there, just before the CLI
      // settings.json once (it stays), the shell lines every run (the relayed port changes)
      const install =
        runs === 0
          ? ' && "$ROTSCOPE_NODE" "$ROTSCOPE_BIN" copilot install --url "http://127.0.0.1:$OTLP_PORT" >/dev/null'
          : '';
      const cmd = options.viaInstall
        ? [
            'sh',
            '-c',
            `eval "$("$ROTSCOPE_NODE" "$ROTSCOPE_BIN" copilot install --url "http://127.0.0.1:$OTLP_PORT" --print-env)"${install} && unset ROTSCOPE_NODE ROTSCOPE_BIN ROTSCOPE_FROM_SOURCE OTLP_PORT && exec "$0" "$@"`,
            options.binary,
            ...args,
          ]
        : [options.binary, ...args];
      const spec = JSON.stringify({
        forwards: { api: apiSocket, otlp: otlpSocket },
        env: options.viaInstall
          ? {
              ...env,
              OTLP_PORT: '{{otlp}}',
              ROTSCOPE_NODE: process.execPath,
              ROTSCOPE_BIN,
              ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
            }
          : env,
        cmd,
        cwd: workDir,
      });
      return runRelayed(spec, {
        path: env.PATH!,
        timeoutMs: 150_000,
        outputFiles: join(root, `run-${++runs}`),
      });
    },
    sessionFile(id) {
      return join(copilotHome, 'session-state', id, 'events.jsonl');
    },
    sessionIds() {
      const dir = join(copilotHome, 'session-state');
      if (!existsSync(dir)) return [];
      return readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
        .map((e) => e.name)
        .sort();
    },
    async close() {
      await api.close();
      await new Promise<void>((done) => otlpRelay.close(() => done()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
