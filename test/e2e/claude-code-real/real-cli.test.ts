/**
 * End to end with the REAL Claude Code CLI (not a simulation), on every verified version
 * (versions.json: the oldest supported, 2.1.197, and the newest verified, 2.1.332): each scenario
 * runs the binary offline against the loopback fake Messages API (test/helpers/fake-anthropic.ts),
 * with its telemetry sent to a real `rotscope serve` child process, and asserts the settled
 * findings exactly through the JSON API — the same findings on every version. The transcript the
 * CLI wrote for the same session then goes through `rotscope analyze` and `rotscope import`
 * (real bin/rotscope.js child processes); their findings must agree with the telemetry's, and
 * where a transcript cannot say the same thing the scenario names the difference.
 *
 * Runs on the embedded PGlite only (when DATABASE_URL is unset): the CLI's data does not depend
 * on the backend, and each version costs about 90 s. A version whose binary is not installed is
 * skipped with the install command, unless ROTSCOPE_REQUIRE_CLAUDE_CODE=1 (set by .ci/run, which
 * installs every verified version), where it fails. ROTSCOPE_CLAUDE_CODE_VERSIONS=2.1.400 runs
 * another version instead (`npm run capture:claude-code -- 2.1.400` installs it and reports).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildServer } from '../../helpers/child-server.ts';
import {
  claudeCodeBinary,
  claudeCodeVersionsToTest,
  installHint,
} from '../../helpers/claude-code-cli.ts';
import {
  expectedFromTranscript,
  importAndEvaluate,
  runScenario,
  sorted,
  startScenarioServer,
  type CopiedTranscript,
} from './run-scenario.ts';
import { SCENARIOS, type Seen } from './scenarios.ts';

const onThisBackend = !process.env.DATABASE_URL;
const required = process.env.ROTSCOPE_REQUIRE_CLAUDE_CODE === '1';
const tmp = mkdtempSync(join(tmpdir(), 'rotscope-cc-e2e-'));
let server: ChildServer;

describe.skipIf(!onThisBackend)('the real Claude Code CLI, end to end', () => {
  beforeAll(async () => {
    server = await startScenarioServer(join(tmp, 'serve'));
  }, 90_000);

  afterAll(async () => {
    server?.process.kill('SIGTERM');
    await server?.exited;
    rmSync(tmp, { recursive: true, force: true });
  });

  for (const version of claudeCodeVersionsToTest()) {
    const binary = claudeCodeBinary(version);
    describe(`Claude Code ${version}`, () => {
      if (!binary && !required) {
        it.skip(`skipped: ${installHint(version)}`, () => {});
        return;
      }
      /** Each scenario's session, the findings from its transcript, and its copied main transcript. */
      const imported: Array<{ sessionId: string; findings: Seen[]; files: string[] }> = [];

      for (const scenario of SCENARIOS) {
        it(
          scenario.name,
          async () => {
            expect(binary, `ROTSCOPE_REQUIRE_CLAUDE_CODE=1 and ${installHint(version)}`).not.toBe(
              null,
            );
            const outcome = await runScenario(scenario, {
              binary: binary!,
              serverUrl: server.url,
              copyTo: join(tmp, 'transcripts', version, scenario.id),
            });
            const requests = JSON.stringify(outcome.requests, null, 1);
            for (const run of outcome.runs) expect(run.exitCode, run.stderr + run.stdout).toBe(0);
            expect(outcome.sessionId, requests).not.toBeNull();
            expect(outcome.ran).toBe(true);
            const analyzed = outcome.analyze!;
            expect(analyzed.code, analyzed.stderr).toBe(0);
            expect(analyzed.conversationIds).toEqual([outcome.sessionId]);
            // the import test below compares with what analyze found, whatever that was
            imported.push({
              sessionId: outcome.sessionId!,
              findings: sorted(analyzed.findings),
              files: outcome.transcripts
                .filter((t: CopiedTranscript) => !t.subagent)
                .map((t) => t.path),
            });

            expect(sorted(outcome.telemetry!), requests).toEqual(sorted(scenario.telemetry));
            expect(sorted(analyzed.findings), scenario.transcript?.because).toEqual(
              sorted(expectedFromTranscript(scenario)),
            );
          },
          150_000,
        );
      }

      it('rotscope import of the same transcripts settles on what rotscope analyze found', async () => {
        expect(imported.length, 'every scenario ran through').toBe(SCENARIOS.length);
        const result = await importAndEvaluate(
          imported.flatMap((i) => i.files),
          new Map(imported.map((i) => [i.sessionId, i.findings.length])),
          join(tmp, `imported-${version}`),
        );
        expect(result.code, result.stderr).toBe(0);
        for (const { sessionId, findings } of imported)
          expect(sorted(result.findings.get(sessionId) ?? []), sessionId).toEqual(findings);
      }, 120_000);
    });
  }
});
