/**
 * End to end with the REAL Claude Code CLI (2.1.197, not a simulation): each scenario runs the
 * binary offline against the loopback fake Messages API (test/helpers/fake-anthropic.ts), with
 * its telemetry sent to a real `rotscope serve` child process, and asserts the settled findings
 * exactly through the JSON API. The transcript the CLI wrote for the same session then goes
 * through `rotscope analyze` and `rotscope import` (real bin/rotscope.js child processes); their
 * findings must agree with the telemetry's, and where a transcript cannot say the same thing the
 * scenario names the difference.
 *
 * Runs on the embedded PGlite only (when DATABASE_URL is unset): the CLI's data does not depend
 * on the backend and the file costs about three minutes. Skipped, with the install command, when
 * the CLI is not installed (`.ci/run` installs it into ~/.cache/claude-code-2.1.197).
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../../helpers/child-server.ts';
import {
  INSTALL_HINT,
  claudeCodeBinary,
  startClaudeCodeSession,
} from '../../helpers/claude-code-cli.ts';
import { SCENARIOS, type Seen } from './scenarios.ts';

const BIN = fileURLToPath(new URL('../../../bin/rotscope.js', import.meta.url));
const binary = claudeCodeBinary();
const onThisBackend = !process.env.DATABASE_URL;

interface RawFinding {
  detector: string;
  severity: string;
  kind?: string | null;
  summary: string;
  details: Record<string, unknown>;
}

function seen(f: RawFinding): Seen {
  const d = f.details;
  const tool = (d.tool ?? d.toolName ?? null) as string | null;
  return { detector: f.detector, severity: f.severity, kind: f.kind ?? null, tool };
}

const order = (a: Seen, b: Seen) =>
  JSON.stringify([a.detector, a.severity, a.kind, a.tool]).localeCompare(
    JSON.stringify([b.detector, b.severity, b.kind, b.tool]),
  );
const sorted = (list: Seen[]) => [...list].sort(order);

/** Runs bin/rotscope.js; resolves with its exit code and output. */
function rotscope(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, DATABASE_URL: '', ROTSCOPE_FROM_SOURCE: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const tmp = mkdtempSync(join(tmpdir(), 'rotscope-cc-e2e-'));
let server: ChildServer;
/** Each scenario's session, the findings from its transcript, and its copied main transcript. */
const imported: Array<{ sessionId: string; findings: Seen[]; files: string[] }> = [];

async function findingsOf(sessionId: string): Promise<RawFinding[]> {
  const res = await fetch(`${server.url}/api/findings?conversationId=${sessionId}&limit=200`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: RawFinding[] }).items;
}

/** The session's findings once they have not changed for 3 s (the evaluator settled it). */
async function settledFindings(sessionId: string): Promise<RawFinding[]> {
  let last = '';
  let stableSince = Date.now();
  for (;;) {
    const now = JSON.stringify(await findingsOf(sessionId));
    if (now !== last) {
      last = now;
      stableSince = Date.now();
    } else if (Date.now() - stableSince >= 3_000) {
      return JSON.parse(now) as RawFinding[];
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.skipIf(!binary || !onThisBackend)('the real Claude Code CLI, end to end', () => {
  beforeAll(async () => {
    server = await startChildServer({
      ROTSCOPE_DATA_DIR: join(tmp, 'serve'),
      ROTSCOPE_FROM_SOURCE: '1',
      ROTSCOPE_SPLIT_EVIDENCE_SETTLE_MS: '1500',
      ROTSCOPE_EVALUATOR_QUIET_MS: '200',
    });
  }, 90_000);

  afterAll(async () => {
    server?.process.kill('SIGTERM');
    await server?.exited;
    rmSync(tmp, { recursive: true, force: true });
  });

  for (const scenario of SCENARIOS) {
    it(
      scenario.name,
      async () => {
        const session = await startClaudeCodeSession({
          binary: binary!,
          otlpUrl: server.url,
          script: scenario.script,
          ...scenario.options,
        });
        try {
          let sessionId: string | null = null;
          for (const run of scenario.runs) {
            const result = await session.run(run.prompt, { resume: run.resume === true });
            expect(result.exitCode, result.stderr + result.stdout).toBe(0);
            sessionId = result.sessionId;
          }
          expect(sessionId).not.toBeNull();
          const telemetry = (await settledFindings(sessionId!)).map(seen);
          expect(sorted(telemetry), JSON.stringify(session.api.requests, null, 1)).toEqual(
            sorted(scenario.telemetry),
          );

          // the main session file: its sub-agent files are read with it
          const files = session.transcripts().filter((t) => !t.includes('/subagents/'));
          const analyzed = await rotscope(['analyze', '--json', ...files], {});
          expect(analyzed.code, analyzed.stderr).toBe(0);
          const report = JSON.parse(analyzed.stdout) as {
            conversations: Array<{ conversationId: string; findings: RawFinding[] }>;
          };
          expect(report.conversations.map((c) => c.conversationId)).toEqual([sessionId]);
          const fromTranscript = report.conversations[0]!.findings.map(seen);
          const expected = scenario.transcript?.findings ?? scenario.telemetry;
          expect(sorted(fromTranscript), scenario.transcript?.because).toEqual(sorted(expected));
          const copies: string[] = [];
          for (const file of session.transcripts()) {
            const to = join(tmp, 'transcripts', relative(session.configDir, file));
            mkdirSync(dirname(to), { recursive: true });
            copyFileSync(file, to);
            if (!file.includes('/subagents/')) copies.push(to);
          }
          imported.push({ sessionId: sessionId!, findings: sorted(fromTranscript), files: copies });
        } finally {
          await session.close();
        }
      },
      150_000,
    );
  }

  it('rotscope import of the same transcripts settles on what rotscope analyze found', async () => {
    expect(imported.length).toBe(SCENARIOS.length);
    const dataDir = join(tmp, 'imported');
    const files = imported.flatMap((i) => i.files);
    const result = await rotscope(['import', '--data-dir', dataDir, ...files], {});
    expect(result.code, result.stderr).toBe(0);
    const importServer = await startChildServer({
      ROTSCOPE_DATA_DIR: dataDir,
      ROTSCOPE_FROM_SOURCE: '1',
      ROTSCOPE_EVALUATOR_QUIET_MS: '200',
    });
    try {
      for (const { sessionId, findings } of imported) {
        let items: RawFinding[] = [];
        // the evaluator picks the imported conversations up after its quiet time
        for (let i = 0; i < 40; i++) {
          const res = await fetch(
            `${importServer.url}/api/findings?conversationId=${sessionId}&limit=200`,
          );
          items = ((await res.json()) as { items: RawFinding[] }).items;
          if (items.length >= findings.length) break;
          await new Promise((r) => setTimeout(r, 250));
        }
        expect(sorted(items.map(seen)), sessionId).toEqual(findings);
      }
    } finally {
      importServer.process.kill('SIGTERM');
      await importServer.exited;
    }
  }, 120_000);
});

if (!binary && onThisBackend) {
  describe('the real Claude Code CLI, end to end', () => {
    it.skip(`skipped: ${INSTALL_HINT}`, () => {});
  });
}
