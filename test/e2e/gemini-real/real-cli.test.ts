/**
 * End to end with the REAL Gemini CLI (`@google/gemini-cli` 0.61.0, not a simulation): each
 * scenario runs the CLI offline against the loopback fake Gemini API
 * (test/helpers/fake-gemini.ts), with its telemetry (OTLP/HTTP JSON, traces on) sent to a real
 * `rotscope serve` child process, and asserts the settled findings exactly through the JSON API,
 * and what the stored conversation holds (one conversation per session across `--resume`, the
 * compressor's and the router's calls as side calls, the compression as a compaction, the finish
 * reasons joined from the logs). Then the session's chat file (`~/.gemini/tmp/<project>/chats/`):
 * `rotscope analyze` of it alone finds the same but for cut-offs, and `rotscope import` of it
 * beside the telemetry changes nothing (one session counted once).
 *
 * Runs on the embedded PGlite only (when DATABASE_URL is unset): the CLI's data does not depend
 * on the backend. Skipped, with the install command, when the CLI is not installed (`.ci/run`
 * installs it into ~/.cache/gemini-cli-0.61.0); fails instead under ROTSCOPE_REQUIRE_GEMINI=1
 * (exported by `.ci/run`).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../../helpers/child-server.ts';
import { GEMINI_INSTALL_HINT, geminiCliEntry } from '../../helpers/gemini-cli.ts';
import { runCli } from '../../helpers/cli.ts';
import {
  describeSeen,
  runScenario,
  seen,
  settledFindings,
  sorted,
  startHeaderRecorder,
  storedOf,
  type RawFinding,
} from './run-scenario.ts';
import { SCENARIOS } from './scenarios.ts';

const entry = geminiCliEntry();
const onThisBackend = !process.env.DATABASE_URL;
const required = process.env.ROTSCOPE_REQUIRE_GEMINI === '1';

describe.skipIf(!entry || !onThisBackend)('the real Gemini CLI, end to end', () => {
  let tmp: string;
  let server: ChildServer;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'rotscope-gemini-e2e-'));
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
        // set up by `rotscope gemini install`: the token it wrote must reach the server
        const token = scenario.options.viaInstall?.token;
        const headers = token === undefined ? null : await startHeaderRecorder(server.url);
        const outcome = await runScenario(scenario, {
          entry: entry!,
          serverUrl: server.url,
          ...(headers ? { otlpUrl: headers.url } : {}),
        }).finally(() => headers?.close());
        if (headers !== null) {
          const paths = new Set(headers.seen.map((r) => r.path));
          expect(paths).toEqual(new Set(['/v1/traces', '/v1/logs', '/v1/metrics']));
          expect(new Set(headers.seen.map((r) => r.authorization))).toEqual(
            new Set([`Bearer ${token}`]),
          );
        }
        const last = outcome.runs.at(-1);
        expect(outcome.ran, `${last?.stderr ?? ''}${last?.stdout ?? ''}`).toBe(true);
        // the guard preloaded into the CLI (a Node program) refused nothing: with the offline
        // settings it tries no host but the fake API and the OTLP endpoint (without them it
        // would send usage statistics to play.googleapis.com)
        for (const run of outcome.runs) expect(run.stderr).not.toContain('[network-guard] refused');
        const requests = outcome.requests.map((r) => `${r.kind} ${r.model} ${r.answer}`);
        expect(
          sorted(outcome.findings!),
          `found ${describeSeen(outcome.findings!)}; the fake was asked:\n${requests.join('\n')}`,
        ).toEqual(sorted(scenario.findings));
        expect(outcome.stored, requests.join('\n')).toEqual(scenario.stored);

        // its chat files, analyzed alone, say the same but for cut-offs (the files hold no
        // finish reason), and imported beside the telemetry change nothing: one session counted
        // once. A resumed session is one file, or two when the resume began in another minute
        // than the first run (the CLI names a file `session-<minute>-<id8>.jsonl` and, resuming
        // after a compression, starts a new one: measured with 0.61.0 under CI's load)
        const names = outcome.chatFiles.map((f) => f.name);
        expect(names.length, names.join(', ')).toBeGreaterThanOrEqual(1);
        expect(names.length, names.join(', ')).toBeLessThanOrEqual(scenario.runs.length);
        for (const name of names) expect(name).toMatch(`-${outcome.sessionId!.slice(0, 8)}.jsonl`);
        const chats = join(mkdtempSync(join(tmp, 'home-')), '.gemini/tmp/work/chats');
        mkdirSync(chats, { recursive: true });
        const chatPaths = outcome.chatFiles.map((f) => {
          const file = join(chats, f.name);
          writeFileSync(file, f.text);
          return file;
        });
        const analyzed = await runCli(['analyze', '--json', ...chatPaths], { timeoutMs: 60_000 });
        expect(analyzed.code, analyzed.stderr).toBe(0);
        const report = JSON.parse(analyzed.stdout) as {
          conversations: Array<{ conversationId: string; findings: RawFinding[] }>;
        };
        expect(report.conversations.map((c) => c.conversationId)).toEqual([outcome.sessionId]);
        expect(sorted(report.conversations[0]!.findings.map(seen))).toEqual(
          sorted(scenario.findings.filter((f) => f.detector !== 'output_cut_off')),
        );
        const imported = await runCli(['import', ...chatPaths], {
          env: { ROTSCOPE_DATA_DIR: join(tmp, 'serve') },
          timeoutMs: 120_000,
        });
        expect(imported.code, imported.stderr).toBe(0);
        expect(imported.stdout).toMatch(/merged/);
        const afterImport = (await settledFindings(server.url, outcome.sessionId!)).map(seen);
        expect(sorted(afterImport)).toEqual(sorted(scenario.findings));
        expect(await storedOf(server.url, outcome.sessionId!)).toEqual(scenario.stored);
      },
      180_000,
    );
  }
});

if (!entry && onThisBackend) {
  describe('the real Gemini CLI, end to end', () => {
    if (required) it(`is installed (${GEMINI_INSTALL_HINT})`, () => expect(entry).not.toBeNull());
    else it.skip(`skipped: ${GEMINI_INSTALL_HINT}`, () => {});
  });
}
