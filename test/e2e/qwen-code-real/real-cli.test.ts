/**
 * End to end with the REAL Qwen Code (`@qwen-code/qwen-code` 0.24.4, not a simulation): each
 * scenario runs the CLI offline against the loopback fake OpenAI-compatible API
 * (test/helpers/fake-openai-chat.ts), with its telemetry (OTLP/HTTP JSON) sent to one real
 * `rotscope serve` child process, and asserts the settled findings exactly through the JSON API,
 * and what the stored conversation holds (one conversation per session across `--continue`, the
 * compressor's and the memory extractor's calls as side calls, its compressions as compactions,
 * cut outputs).
 *
 * Runs on the embedded PGlite only (when DATABASE_URL is unset). Skipped, with the install command,
 * when the CLI is not installed (`.ci/run` installs it into ~/.cache/qwen-code-0.24.4); fails
 * instead under ROTSCOPE_REQUIRE_QWEN=1 (exported by `.ci/run`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../../helpers/child-server.ts';
import { QWEN_INSTALL_HINT, qwenCodeEntry, startQwenSession } from '../../helpers/qwen-code.ts';
import type { ChatRequest } from '../../helpers/fake-openai-chat.ts';
import {
  describeSeen,
  seen,
  settledFindings,
  sorted,
  type Seen,
} from '../../helpers/seen-findings.ts';
import { SCENARIOS, type Scenario, type Stored } from './scenarios.ts';

const entry = qwenCodeEntry();
const onThisBackend = !process.env.DATABASE_URL;
const required = process.env.ROTSCOPE_REQUIRE_QWEN === '1';

interface StoredCall {
  sideCall: string | null;
  finishReasonRaw: string | null;
  outputToolCall: boolean | null;
  contextWindow: number | null;
  windowSource: string | null;
}

/** The stored conversation in the shape scenarios compare (null when it is not stored). */
async function storedOf(
  serverUrl: string,
  sessionId: string,
): Promise<{ stored: Stored; windows: string[] } | null> {
  const res = await fetch(`${serverUrl}/api/conversations/${encodeURIComponent(sessionId)}`);
  if (res.status === 404) return null;
  if (res.status !== 200) throw new Error(`GET /api/conversations: ${res.status}`);
  const body = (await res.json()) as {
    calls: StoredCall[];
    compactions: Array<{ evidence: string; kind: string }>;
  };
  const main = body.calls.filter((c) => c.sideCall === null);
  return {
    stored: {
      mainCalls: main.length,
      sideCalls: body.calls.flatMap((c) => (c.sideCall === null ? [] : [c.sideCall])).sort(),
      compactions: body.compactions.map((c) => `${c.evidence}/${c.kind}`),
      cuts: main
        .filter(
          (c) => c.finishReasonRaw !== null && !['stop', 'tool_calls'].includes(c.finishReasonRaw),
        )
        .map(
          (c) =>
            `${c.finishReasonRaw}${c.outputToolCall === true ? '+tool' : c.outputToolCall === null ? '?tool' : ''}`,
        ),
    },
    windows: [...new Set(body.calls.map((c) => `${c.contextWindow}/${c.windowSource}`))],
  };
}

async function runScenario(scenario: Scenario, serverUrl: string) {
  const session = await startQwenSession({
    entry: entry!,
    otlpUrl: serverUrl,
    script: scenario.script,
    ...scenario.options,
  });
  const runs = [];
  try {
    for (const run of scenario.runs) {
      const result = await session.run(run.prompt, { resume: run.resume === true });
      runs.push(result);
      if (result.exitCode !== 0) break;
    }
  } finally {
    await session.close();
  }
  return { runs, requests: session.api.requests };
}

describe.skipIf(!entry || !onThisBackend)('the real Qwen Code, end to end', () => {
  let tmp: string;
  let server: ChildServer;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'rotscope-qwen-e2e-'));
    server = await startChildServer({
      ROTSCOPE_DATA_DIR: join(tmp, 'serve'),
      ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
      ROTSCOPE_SPLIT_EVIDENCE_SETTLE_MS: '1500',
      ROTSCOPE_EVALUATOR_QUIET_MS: '200',
    });
  }, 90_000);

  afterAll(async () => {
    server?.process.kill('SIGTERM');
    await server?.exited;
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  for (const scenario of SCENARIOS) {
    it(
      scenario.name,
      async () => {
        const t0 = Date.now();
        const { runs, requests } = await runScenario(scenario, server.url);
        const t1 = Date.now();
        const asked = requests.map((r: ChatRequest) => `${r.kind} ${r.answer}`).join('\n');
        const last = runs.at(-1);
        const sessionId = runs[0]?.sessionId ?? null;
        expect(
          runs.length === scenario.runs.length && runs.every((r) => r.exitCode === 0),
          `${last?.stderr ?? ''}${last?.stdout ?? ''}`,
        ).toBe(true);
        // --continue keeps the session: one conversation
        expect(new Set(runs.map((r) => r.sessionId))).toEqual(new Set([sessionId]));
        for (const run of runs) expect(run.stderr).not.toContain('[network-guard] refused');
        const findings: Seen[] = (await settledFindings(server.url, sessionId!)).map(seen);
        if (process.env.ROTSCOPE_QWEN_TIMING)
          console.log(`${scenario.id}: CLI ${t1 - t0} ms, settled ${Date.now() - t1} ms`);
        expect(
          sorted(findings),
          `found ${describeSeen(findings)}; the fake was asked:\n${asked}`,
        ).toEqual(sorted(scenario.findings));
        const stored = await storedOf(server.url, sessionId!);
        expect(stored?.stored, asked).toEqual(scenario.stored);
        // every call is judged on the window Qwen Code reports for qwen3-coder-plus
        expect(stored?.windows).toEqual(['1000000/agent']);
      },
      180_000,
    );
  }
});

if (!entry && onThisBackend) {
  describe('the real Qwen Code, end to end', () => {
    if (required) it(`is installed (${QWEN_INSTALL_HINT})`, () => expect(entry).not.toBeNull());
    else it.skip(`skipped: ${QWEN_INSTALL_HINT}`, () => {});
  });
}
