/**
 * End to end with the REAL Codex CLI (0.171.0, the native binary of `@openai/codex`, not a
 * simulation): each scenario (./scenarios.ts) runs `codex exec` offline against the loopback
 * fake Responses API (test/helpers/fake-openai-responses.ts), in a private network namespace
 * with an environment built from nothing (test/helpers/codex-cli.ts). Its OTLP/HTTP telemetry,
 * configured by the `[otel]` section `rotscope codex install` writes (the JSON scenario sets its
 * own), goes to a real `rotscope serve` child process; the settled findings are asserted exactly
 * through the JSON API. The session file Codex wrote for the same session then goes through
 * `rotscope analyze` and `rotscope import` (real bin/rotscope.js child processes): into a store of
 * its own, where its findings must agree with the telemetry's (where the file says more, a
 * cut-off Codex's telemetry cannot show, the scenario names the difference), and into the
 * telemetry's store, where each request stays one call.
 *
 * Runs on the embedded PGlite only (when DATABASE_URL is unset). Skipped, with the install
 * command, when the CLI is not installed, except under `.ci/run` (ROTSCOPE_REQUIRE_CODEX=1),
 * where a missing CLI fails.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../../helpers/child-server.ts';
import { CODEX_INSTALL_HINT, codexBinary, startCodexSession } from '../../helpers/codex-cli.ts';
import { CODEX_SCENARIOS, type Seen } from './scenarios.ts';
import { seen, settledFindings, sorted, type RawFinding } from '../../helpers/seen-findings.ts';

const BIN = fileURLToPath(new URL('../../../bin/rotscope.js', import.meta.url));
const binary = codexBinary();
const onThisBackend = !process.env.DATABASE_URL;
const required = process.env.ROTSCOPE_REQUIRE_CODEX === '1';

interface StoredCall {
  conversationId: string;
  conversationSynthetic: boolean;
  producer: string;
  responseModel: string | null;
  contextTokens: number | null;
  contextWindow: number | null;
  windowSource: string | null;
  finishReasonRaw: string | null;
  requestId: string | null;
  sideCall: string | null;
}

/** Runs bin/rotscope.js; resolves with its exit code and output. */
function rotscope(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: {
        ...process.env,
        DATABASE_URL: '',
        ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const tmp = mkdtempSync(join(tmpdir(), 'rotscope-codex-e2e-'));
let server: ChildServer;
/** The [otel] section `rotscope codex install` writes, for the relayed OTLP port. */
let installedOtel: string;
/** Each scenario's conversation, the findings from its session file, and the copied file. */
const imported: Array<{
  conversationId: string;
  findings: Seen[];
  file: string;
  /** The calls the session file holds (all of the telemetry's, and what telemetry missed). */
  fileCalls: number;
}> = [];

async function getJson<T>(path: string, base = server.url): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: (await res.json()) as T };
}

/** The conversation's stored calls once there are `count` of them (telemetry arrives after exit). */
async function storedCalls(conversationId: string, count: number): Promise<StoredCall[]> {
  let calls: StoredCall[] = [];
  for (let i = 0; i < 120; i++) {
    const res = await getJson<{ calls: StoredCall[] }>(`/api/conversations/${conversationId}`);
    calls = res.status === 200 ? res.body.calls : [];
    if (calls.length >= count) return calls;
    await sleep(250);
  }
  return calls;
}

describe.skipIf(!binary || !onThisBackend)('the real Codex CLI, end to end', () => {
  beforeAll(async () => {
    // Codex is configured as a user would: `rotscope codex install` writes its [otel] section
    const codexHome = join(tmp, 'install');
    const install = await rotscope(['codex', 'install', '--url', 'http://127.0.0.1:{{otlp}}'], {
      CODEX_HOME: codexHome,
      ROTSCOPE_URL: '',
      ROTSCOPE_TOKEN: '',
    });
    expect(install.code, install.stderr).toBe(0);
    installedOtel = readFileSync(join(codexHome, 'config.toml'), 'utf8');
    server = await startChildServer({
      ROTSCOPE_DATA_DIR: join(tmp, 'serve'),
      ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
      ROTSCOPE_EVALUATOR_QUIET_MS: '200',
    });
  }, 90_000);

  afterAll(async () => {
    server?.process.kill('SIGTERM');
    await server?.exited;
    rmSync(tmp, { recursive: true, force: true });
  });

  for (const scenario of CODEX_SCENARIOS) {
    it(
      scenario.name,
      async () => {
        const session = await startCodexSession({
          binary: binary!,
          otlpUrl: server.url,
          script: scenario.script,
          // the JSON scenario sets its own exporters; the rest run what `codex install` wrote
          ...(scenario.options.protocol === 'json' ? {} : { otelToml: installedOtel }),
          ...scenario.options,
        });
        try {
          let threadId: string | null = null;
          for (const run of scenario.runs) {
            const result = await session.run(run.prompt, { resume: run.resume === true });
            const log = `${result.stderr}\n${result.stdout}\n${JSON.stringify(session.api.requests, null, 1)}`;
            expect(result.exitCode, log).toBe(run.exit ?? 0);
            // a resumed run continues the same thread: one conversation
            if (threadId !== null) expect(result.threadId).toBe(threadId);
            threadId = result.threadId;
          }
          expect(threadId).not.toBeNull();
          const conversationId = threadId!;

          const calls = await storedCalls(conversationId, scenario.telemetryCalls);
          expect(calls.length, JSON.stringify(calls, null, 1)).toBe(scenario.telemetryCalls);
          for (const call of calls) {
            expect(call).toMatchObject({
              conversationId,
              conversationSynthetic: false,
              producer: 'codex',
              responseModel: 'gpt-5.5',
              contextWindow: 272_000,
              windowSource: 'catalog',
              // Codex's telemetry has no finish reason: output_cut_off is blind to it
              finishReasonRaw: null,
              sideCall: null,
            });
            expect(call.requestId).toMatch(/^codex:[0-9a-f]{32}:\d+:\d+:\d+$/);
          }
          const telemetry = (
            await settledFindings(server.url, conversationId, {
              atLeast: scenario.telemetry.length,
            })
          ).map(seen);
          expect(sorted(telemetry), JSON.stringify(session.api.requests, null, 1)).toEqual(
            sorted(scenario.telemetry),
          );

          // the session file: one per session (a resumed run appends to it)
          const files = session.sessionFiles();
          expect(files.length).toBe(1);
          // a folder stands for the session files under it
          const analyzed = await rotscope([
            'analyze',
            '--json',
            join(session.codexHome, 'sessions'),
          ]);
          expect(analyzed.code, analyzed.stderr).toBe(0);
          const report = JSON.parse(analyzed.stdout) as {
            files: Array<{ format: string }>;
            conversations: Array<{ conversationId: string; calls: number; findings: RawFinding[] }>;
          };
          expect(report.files.map((f) => f.format)).toEqual(['codex_session']);
          expect(report.conversations.map((c) => c.conversationId)).toEqual([conversationId]);
          const fromFile = report.conversations[0]!.findings.map(seen);
          const expected = scenario.sessionFile?.findings ?? scenario.telemetry;
          expect(sorted(fromFile), scenario.sessionFile?.because).toEqual(sorted(expected));
          const copy = join(tmp, 'sessions', basename(files[0]!));
          mkdirSync(join(tmp, 'sessions'), { recursive: true });
          copyFileSync(files[0]!, copy);
          imported.push({
            conversationId,
            findings: sorted(fromFile),
            file: copy,
            fileCalls: report.conversations[0]!.calls,
          });
        } finally {
          await session.close();
        }
      },
      180_000,
    );
  }

  it('the cut-off session: telemetry carries no finish reason, coverage says output_cut_off is blind', async () => {
    const res = await getJson<{
      producers: Array<{ producer: string; blind: string[]; covered: Record<string, number> }>;
    }>('/api/coverage');
    expect(res.status).toBe(200);
    const codex = res.body.producers.find((p) => p.producer === 'codex');
    expect(codex?.blind).toContain('output_cut_off');
    expect(codex?.covered.output_cut_off).toBe(0);
  });

  it('rotscope import of the same session files settles on what rotscope analyze found', async () => {
    expect(imported.length).toBe(CODEX_SCENARIOS.length);
    const dataDir = join(tmp, 'imported');
    const result = await rotscope([
      'import',
      '--data-dir',
      dataDir,
      ...imported.map((i) => i.file),
    ]);
    expect(result.code, result.stderr).toBe(0);
    const importServer = await startChildServer({
      ROTSCOPE_DATA_DIR: dataDir,
      ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
      ROTSCOPE_EVALUATOR_QUIET_MS: '200',
    });
    try {
      for (const { conversationId, findings } of imported) {
        const items = await settledFindings(importServer.url, conversationId, {
          atLeast: findings.length,
        });
        expect(sorted(items.map(seen)), conversationId).toEqual(findings);
      }
    } finally {
      importServer.process.kill('SIGTERM');
      await importServer.exited;
    }
  }, 180_000);

  it("importing the session files into the telemetry's store counts each request once", async () => {
    expect(imported.length).toBe(CODEX_SCENARIOS.length);
    // the embedded store has one owner: the server stops for the import, then starts again
    server.process.kill('SIGTERM');
    await server.exited;
    const dataDir = join(tmp, 'serve');
    const result = await rotscope([
      'import',
      '--data-dir',
      dataDir,
      ...imported.map((i) => i.file),
    ]);
    expect(result.code, result.stderr).toBe(0);
    server = await startChildServer({
      ROTSCOPE_DATA_DIR: dataDir,
      ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
      ROTSCOPE_EVALUATOR_QUIET_MS: '200',
    });
    for (const { conversationId, findings, fileCalls } of imported) {
      const res = await getJson<{ calls: StoredCall[] }>(`/api/conversations/${conversationId}`);
      const calls = res.body.calls;
      // one row per request: the session file's calls, telemetry's among them
      expect(calls.length, JSON.stringify(calls, null, 1)).toBe(fileCalls);
      const ids = calls.map((c) => c.requestId);
      expect(new Set(ids).size, conversationId).toBe(ids.length);
      // the findings of telemetry and of the file, each once (the file's are a superset)
      const items = await settledFindings(server.url, conversationId, {
        atLeast: findings.length,
      });
      expect(sorted(items.map(seen)), conversationId).toEqual(findings);
    }
  }, 240_000);
});

if (!binary && onThisBackend) {
  describe('the real Codex CLI, end to end', () => {
    if (required) {
      it('is installed (ROTSCOPE_REQUIRE_CODEX=1)', () => {
        throw new Error(CODEX_INSTALL_HINT);
      });
    } else {
      it.skip(`skipped: ${CODEX_INSTALL_HINT}`, () => {});
    }
  });
}
