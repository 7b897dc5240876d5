/**
 * End to end with the REAL Claude Agent SDK (`@anthropic-ai/claude-agent-sdk` 0.3.336, which runs
 * its bundled Claude Code 2.1.336; not a simulation): each scenario runs a small app on `query()`
 * (./app.mjs) offline against the loopback fake Messages API, with the telemetry switched on as
 * README.md says for Agent SDK apps and sent to one real `rotscope serve` child, and asserts the
 * settled findings exactly through the JSON API, and what the stored conversation holds (one
 * conversation across a resumed `query()`, the compactor's call as a side call, a sub-agent
 * from `options.agents` in its own stream). The MCP and persisted-result scenarios are the two
 * fixes this suite pins for every Claude Code user: an MCP tool named `mcp__<server>__<tool>`,
 * not `mcp_tool`, and a result Claude Code persisted to a file counted at what the model saw.
 *
 * Runs on the embedded PGlite only (when DATABASE_URL is unset). Skipped, with the install
 * command, when the SDK is not installed (`.ci/run` installs it into
 * ~/.cache/claude-agent-sdk-0.3.336); fails instead under ROTSCOPE_REQUIRE_CLAUDE_AGENT_SDK=1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLAUDE_AGENT_SDK_INSTALL_HINT,
  claudeAgentSdkPackage,
  runAgentSdkApp,
} from '../../helpers/claude-agent-sdk.ts';
import { startChildServer, type ChildServer } from '../../helpers/child-server.ts';
import { describeSeen, seen, settledFindings, sorted } from '../../helpers/seen-findings.ts';
import { SCENARIOS, type Stored } from './scenarios.ts';

const sdk = claudeAgentSdkPackage();
const onThisBackend = !process.env.DATABASE_URL;
const required = process.env.ROTSCOPE_REQUIRE_CLAUDE_AGENT_SDK === '1';

interface StoredCall {
  sideCall: string | null;
  agentId: string | null;
}

/** The stored conversation in the shape scenarios compare (null when it is not stored). */
async function storedOf(serverUrl: string, sessionId: string): Promise<Stored | null> {
  const res = await fetch(`${serverUrl}/api/conversations/${encodeURIComponent(sessionId)}`);
  if (res.status === 404) return null;
  if (res.status !== 200) throw new Error(`GET /api/conversations: ${res.status}`);
  const body = (await res.json()) as {
    calls: StoredCall[];
    compactions: Array<{ evidence: string; kind: string }>;
  };
  const own = body.calls.filter((c) => c.sideCall === null);
  return {
    mainCalls: own.filter((c) => c.agentId === null).length,
    subAgentCalls: own.filter((c) => c.agentId !== null).length,
    subAgents: new Set(own.flatMap((c) => (c.agentId === null ? [] : [c.agentId]))).size,
    sideCalls: body.calls.flatMap((c) => (c.sideCall === null ? [] : [c.sideCall])).sort(),
    compactions: body.compactions.map((c) => `${c.evidence}/${c.kind}`),
  };
}

describe.skipIf(!sdk || !onThisBackend)('the real Claude Agent SDK, end to end', () => {
  let tmp: string;
  let server: ChildServer;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'rotscope-agent-sdk-e2e-'));
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
        const outcome = await runAgentSdkApp(
          {
            sdk: sdk!,
            script: scenario.script,
            otlpUrl: server.url,
            app: scenario.app,
            ...(scenario.files ? { files: scenario.files } : {}),
          },
          scenario.runs,
        );
        const requests = outcome.api.map((r) => `${r.kind} ${r.answer}`).join('\n');
        const log = `${outcome.stderr.slice(-4000)}${outcome.stdout}\nthe fake was asked:\n${requests}`;
        expect(outcome.exitCode, log).toBe(0);
        expect(outcome.queries.length, log).toBe(scenario.runs.length);
        const sessionId = outcome.queries[0]!.sessionId;
        expect(sessionId, log).toBeTruthy();
        // a resumed query() continues the same session
        for (const q of outcome.queries) {
          expect(q.sessionId, log).toBe(sessionId);
          expect(q.subtype, log).toBe('success');
        }
        const findings = (await settledFindings(server.url, sessionId!)).map(seen);
        expect(sorted(findings), `found ${describeSeen(findings)}; ${log}`).toEqual(
          sorted(scenario.findings),
        );
        expect(await storedOf(server.url, sessionId!), log).toEqual(scenario.stored);
        if (scenario.cutCoverage !== undefined) {
          // Coverage says what the SDK cannot send: whether a cut response was a tool call
          const coverage = (await (await fetch(`${server.url}/api/coverage`)).json()) as {
            producers: Array<{ producer: string; hints: Record<string, string> }>;
          };
          const claudeCode = coverage.producers.find((p) => p.producer === 'claude_code');
          expect(claudeCode?.hints.output_cut_off).toContain(scenario.cutCoverage);
        }
      },
      120_000,
    );
  }
});

if (!sdk && onThisBackend) {
  describe('the real Claude Agent SDK, end to end', () => {
    if (required)
      it(`is installed (${CLAUDE_AGENT_SDK_INSTALL_HINT})`, () => expect(sdk).not.toBeNull());
    else it.skip(`skipped: ${CLAUDE_AGENT_SDK_INSTALL_HINT}`, () => {});
  });
}
