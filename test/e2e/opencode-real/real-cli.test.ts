/**
 * End to end with the REAL OpenCode (`opencode-ai` 1.18.33, not a simulation): each scenario
 * (scenarios.ts) runs `opencode run` offline against the loopback fake OpenAI-compatible API
 * (test/helpers/fake-opencode-api.ts), its telemetry (OTLP/HTTP JSON, the AI SDK's model-call
 * spans on) sent to one real `rotscope serve` child process, and asserts the settled findings
 * exactly through the JSON API and what the stored conversation holds (one conversation per
 * session across `--continue`, the compaction summary as a side call and the compaction, the real
 * tool of a cut tool call). The scenarios run two at a time (`AT_ONCE`): each OpenCode process
 * spends most of its time starting.
 *
 * Runs on the embedded PGlite only (when DATABASE_URL is unset). Skipped, with the install
 * command, when OpenCode is not installed (`.ci/run` installs it into ~/.cache/opencode-1.18.33);
 * fails instead under ROTSCOPE_REQUIRE_OPENCODE=1 (exported by `.ci/run`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../../helpers/child-server.ts';
import {
  OPENCODE_INSTALL_HINT,
  openCodeBinary,
  startOpenCodeSession,
  type OpenCodeRunResult,
} from '../../helpers/opencode-cli.ts';
import { describeSeen, seen, settledFindings, sorted } from '../../helpers/seen-findings.ts';
import { SCENARIOS, type Scenario, type Stored } from './scenarios.ts';

const binary = openCodeBinary();
const onThisBackend = !process.env.DATABASE_URL;
const required = process.env.ROTSCOPE_REQUIRE_OPENCODE === '1';

interface StoredCall {
  sideCall: string | null;
  finishReasonRaw: string | null;
  outputToolCall: boolean | null;
}

async function storedOf(serverUrl: string, sessionId: string): Promise<Stored | null> {
  const res = await fetch(`${serverUrl}/api/conversations/${encodeURIComponent(sessionId)}`);
  if (res.status === 404) return null;
  if (res.status !== 200) throw new Error(`GET /api/conversations: ${res.status}`);
  const body = (await res.json()) as {
    calls: StoredCall[];
    compactions: Array<{ evidence: string; kind: string }>;
  };
  const main = body.calls.filter((c) => c.sideCall === null);
  return {
    mainCalls: main.length,
    sideCalls: body.calls.flatMap((c) => (c.sideCall === null ? [] : [c.sideCall])).sort(),
    compactions: body.compactions.map((c) => `${c.evidence}/${c.kind}`),
    cuts: main
      .filter(
        (c) => c.finishReasonRaw !== null && !['stop', 'tool-calls'].includes(c.finishReasonRaw),
      )
      .map((c) => `${c.finishReasonRaw}${c.outputToolCall === true ? '+tool' : ''}`),
  };
}

/** An OTLP endpoint on loopback that notes each request's path and Authorization, and forwards it. */
async function startHeaderRecorder(target: string) {
  const seenRequests: Array<{ path: string; authorization: string | null }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seenRequests.push({ path: req.url ?? '/', authorization: req.headers.authorization ?? null });
      fetch(`${target}${req.url ?? '/'}`, {
        method: 'POST',
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        body: Buffer.concat(chunks),
      })
        .then(async (answer) => {
          res.writeHead(answer.status, { 'content-type': 'application/json' });
          res.end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch((error: unknown) => {
          res.writeHead(502);
          res.end(String(error));
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen: seenRequests,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** OpenCode processes running at once: each spends most of its time starting, on every core. */
const AT_ONCE = 2;
let running = 0;
const waiting: Array<() => void> = [];
async function inTurn<T>(work: () => Promise<T>): Promise<T> {
  while (running >= AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

async function runScenario(scenario: Scenario, serverUrl: string, otlpUrl: string) {
  return inTurn(() => runOpenCode(scenario)).then(async ({ runs, requests }) => {
    const sessionId = runs[0]?.sessionId ?? null;
    const ran =
      sessionId !== null &&
      runs.length === scenario.runs.length &&
      runs.every((r) => r.exitCode === 0 && r.sessionId === sessionId);
    if (!ran) return { ran, runs, requests, findings: null, stored: null };
    const findings = (await settledFindings(serverUrl, sessionId)).map(seen);
    const stored = await storedOf(serverUrl, sessionId);
    return { ran, runs, requests, findings, stored };
  });

  async function runOpenCode(scenario: Scenario) {
    const session = await startOpenCodeSession({
      binary: binary!,
      otlpUrl,
      script: scenario.script,
      ...scenario.options,
    });
    const runs: OpenCodeRunResult[] = [];
    try {
      for (const run of scenario.runs) {
        const result = await session.run(run.prompt, { resume: run.resume === true });
        runs.push(result);
        if (result.exitCode !== 0) break;
      }
    } finally {
      await session.close();
    }
    const requests = session.api.requests.map((r) => `${r.kind} ${r.answer}`).join('\n');
    return { runs, requests };
  }
}

describe.skipIf(!binary || !onThisBackend)('the real OpenCode, end to end', () => {
  let tmp: string;
  let server: ChildServer;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'rotscope-opencode-e2e-'));
    server = await startChildServer({
      ROTSCOPE_DATA_DIR: join(tmp, 'serve'),
      ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
      ROTSCOPE_EVALUATOR_QUIET_MS: '200',
    });
  }, 90_000);

  afterAll(async () => {
    server?.process.kill('SIGTERM');
    await server?.exited;
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  // Each run is `opencode run --attach` to an `opencode serve` that outlives it
  // (test/helpers/opencode-cli.ts): `opencode run` alone exits before its exporter sends the last
  // spans (../shared/agents.md, "Lossy at exit"; on a quiet machine it lost the compaction
  // scenario's last calls in every run). One retry stays for a machine too loaded to start
  // OpenCode in time; each run still has to settle on exactly the scenario's findings.
  for (const scenario of SCENARIOS) {
    it.concurrent(scenario.name, { retry: 1, timeout: 600_000 }, async () => {
      const token = scenario.options.viaInstall?.token;
      const headers = token === undefined ? null : await startHeaderRecorder(server.url);
      const outcome = await runScenario(scenario, server.url, headers?.url ?? server.url).finally(
        () => headers?.close(),
      );
      const last = outcome.runs.at(-1);
      expect(
        outcome.ran,
        `${last?.stderr.slice(-3000) ?? ''}${last?.stdout.slice(-2000) ?? ''}`,
      ).toBe(true);
      if (headers !== null) {
        // the endpoint and the token reached OpenCode through the lines install printed
        expect(new Set(headers.seen.map((r) => r.path))).toEqual(
          new Set(['/v1/traces', '/v1/logs']),
        );
        expect(new Set(headers.seen.map((r) => r.authorization))).toEqual(
          new Set([`Bearer ${token}`]),
        );
      }
      expect(
        sorted(outcome.findings!),
        `found ${describeSeen(outcome.findings!)}; the fake was asked:\n${outcome.requests}`,
      ).toEqual(sorted(scenario.findings));
      expect(outcome.stored, outcome.requests).toEqual(scenario.stored);
    });
  }
});

if (!binary && onThisBackend) {
  describe('the real OpenCode, end to end', () => {
    if (required)
      it(`is installed (${OPENCODE_INSTALL_HINT})`, () => expect(binary).not.toBeNull());
    else it.skip(`skipped: ${OPENCODE_INSTALL_HINT}`, () => {});
  });
}
