/**
 * End to end with the REAL GitHub Copilot CLI (`@github/copilot` 1.0.102, not a simulation): each
 * scenario runs the CLI offline (BYOK, `COPILOT_OFFLINE=true`) against the loopback fake Chat
 * Completions API (test/helpers/copilot-cli.ts), its telemetry (OTLP/HTTP JSON traces) sent to a
 * real `rotscope serve` child process, and asserts the settled findings exactly through the JSON
 * API, and what the stored conversation holds (one conversation per session across `--continue`,
 * Copilot's own 64k window, its compaction read as one compaction, the cut calls).
 *
 * Runs on the embedded PGlite only (when DATABASE_URL is unset): the CLI's data does not depend on
 * the backend. Skipped, with the install command, when the CLI is not installed (`.ci/run`
 * installs it into ~/.cache/copilot-1.0.102); fails instead under ROTSCOPE_REQUIRE_COPILOT=1
 * (exported by `.ci/run`).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../../helpers/child-server.ts';
import {
  COPILOT_INSTALL_HINT,
  copilotBinary,
  startCopilotSession,
  type CopilotRunResult,
} from '../../helpers/copilot-cli.ts';
import { describeSeen, seen, settledFindings, sorted } from '../../helpers/seen-findings.ts';
import { SCENARIOS, type Scenario, type Stored } from './scenarios.ts';

const BIN = fileURLToPath(new URL('../../../bin/rotscope.js', import.meta.url));
const binary = copilotBinary();
const onThisBackend = !process.env.DATABASE_URL;
const required = process.env.ROTSCOPE_REQUIRE_COPILOT === '1';

interface StoredCall {
  sideCall: string | null;
  finishReasonRaw: string | null;
  outputToolCall: boolean | null;
  contextWindow: number | null;
  windowSource: string | null;
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
    compactions: body.compactions.map((c) => `${c.evidence}/${c.kind}`),
    cuts: main
      .filter(
        (c) => c.finishReasonRaw !== null && !['stop', 'tool_calls'].includes(c.finishReasonRaw),
      )
      .map((c) => `${c.finishReasonRaw}${c.outputToolCall === true ? '+tool' : ''}`),
    windows: [...new Set(main.map((c) => `${c.contextWindow}/${c.windowSource}`))].sort(),
  };
}

async function runScenario(scenario: Scenario, serverUrl: string, keepDir: string) {
  const session = await startCopilotSession({
    binary: binary!,
    otlpUrl: serverUrl,
    script: scenario.script,
    ...scenario.options,
  });
  const runs: CopilotRunResult[] = [];
  let sessionIds: string[] = [];
  try {
    for (const run of scenario.runs) {
      const result = await session.run(run.prompt, { resume: run.resume === true });
      runs.push(result);
      if (result.exitCode !== 0) break;
    }
    sessionIds = session.sessionIds();
    // the session file outlives the session's temp dir, in a folder of the same shape
    for (const id of sessionIds) {
      mkdirSync(join(keepDir, 'session-state', id), { recursive: true });
      copyFileSync(session.sessionFile(id), join(keepDir, 'session-state', id, 'events.jsonl'));
    }
  } finally {
    await session.close();
  }
  return { runs, sessionIds, requests: session.api.requests };
}

describe.skipIf(!binary || !onThisBackend)('the real GitHub Copilot CLI, end to end', () => {
  let tmp: string;
  let server: ChildServer;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'rotscope-copilot-e2e-'));
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

  for (const scenario of SCENARIOS) {
    it(
      scenario.name,
      async () => {
        const keep = join(tmp, scenario.id);
        const { runs, sessionIds, requests } = await runScenario(scenario, server.url, keep);
        const last = runs.at(-1);
        const asked = requests.map((r) => `${r.kind} ${r.answer} ${r.inputTokens}`).join('\n');
        expect(
          runs.length === scenario.runs.length && runs.every((r) => r.exitCode === 0),
          `${last?.stderr ?? ''}${last?.stdout ?? ''}`,
        ).toBe(true);
        // one session across --continue: its id is the conversation
        expect(sessionIds).toHaveLength(1);
        const sessionId = sessionIds[0]!;
        const findings = (await settledFindings(server.url, sessionId)).map(seen);
        expect(
          sorted(findings),
          `found ${describeSeen(findings)}; the fake was asked:\n${asked}`,
        ).toEqual(sorted(scenario.findings));
        expect(await storedOf(server.url, sessionId), asked).toEqual(scenario.stored);
        // Coverage names Copilot CLI; the first call of a run carries no tool sizes, yet it is
        // covered for tool takeover when a call of its conversation names a tool (issue 36: no
        // "partly blind" on a correct setup)
        const coverage = (await (await fetch(`${server.url}/api/coverage`)).json()) as {
          producers: Array<{
            producer: string;
            agent: string | null;
            calls: number;
            covered: Record<string, number>;
            hints: Record<string, string>;
          }>;
        };
        const copilot = coverage.producers.find((p) => p.producer === 'copilot_cli');
        expect(copilot?.agent).toBe('GitHub Copilot CLI');
        if (copilot!.covered.tool_takeover === copilot!.calls)
          expect(copilot?.hints.tool_takeover).toBeUndefined();
        // with no tool sizes at all (a run without tool output), what to turn on, in its words
        else expect(copilot?.hints.tool_takeover).toContain('telemetry.capture.toolOutput');
        if (!scenario.importSessionFile) return;
        // its session file, imported through the server: the same calls (one per request), the same findings
        // (not spawnSync: a blocked event loop would keep a connection the server closed meanwhile)
        const imported = await promisify(execFile)(
          process.execPath,
          [BIN, 'import', join(keep, 'session-state')],
          {
            env: {
              PATH: process.env.PATH,
              HOME: tmp,
              ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
              ROTSCOPE_DATA_DIR: join(tmp, 'serve'),
            },
            encoding: 'utf8',
          },
        );
        const calls = scenario.stored.mainCalls;
        expect(imported.stdout).toContain(
          `(${calls} calls stored already, by telemetry: merged, not added)`,
        );
        const again = (await settledFindings(server.url, sessionId)).map(seen);
        expect(sorted(again), describeSeen(again)).toEqual(sorted(scenario.findings));
        // still one compaction: the file's record merged with the event (and named first, as
        // a transcript's boundary is: src/receiver/merge-rules.ts)
        expect(await storedOf(server.url, sessionId)).toEqual({
          ...scenario.stored,
          compactions: scenario.stored.compactions.map(() => 'transcript_boundary/summarize'),
        });
      },
      180_000,
    );
  }
});

if (!binary && onThisBackend) {
  describe('the real GitHub Copilot CLI, end to end', () => {
    if (required) it(`is installed (${COPILOT_INSTALL_HINT})`, () => expect(binary).not.toBeNull());
    else it.skip(`skipped: ${COPILOT_INSTALL_HINT}`, () => {});
  });
}
