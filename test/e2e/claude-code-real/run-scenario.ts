/**
 * Runs one scenario (scenarios.ts) with one real Claude Code binary and collects what rotscope
 * made of it: the findings a real `rotscope serve` settled on from the CLI's telemetry, and
 * those `rotscope analyze` found in the transcript the CLI wrote (copied before the session's
 * temp dir goes). Used by real-cli.test.ts (which asserts) and by `npm run capture:claude-code`
 * (which reports and stores the captures as fixtures); neither path hides a failure: a run that
 * did not exit 0 or printed no session id comes back as such.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { startChildServer } from '../../helpers/child-server.ts';
import { startClaudeCodeSession, type RunResult } from '../../helpers/claude-code-cli.ts';
import type { FakeRequest } from '../../helpers/fake-anthropic.ts';
import type { Scenario, Seen } from './scenarios.ts';
import { seen, settledFindings, type RawFinding } from '../../helpers/seen-findings.ts';

export {
  describeSeen,
  findingsOf,
  sameSeen,
  seen,
  settledFindings,
  sorted,
  type RawFinding,
} from '../../helpers/seen-findings.ts';

const BIN = fileURLToPath(new URL('../../../bin/rotscope.js', import.meta.url));

/** Runs bin/rotscope.js on PGlite; resolves with its exit code and output. */
export function rotscope(args: string[], env: Record<string, string> = {}) {
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

/**
 * The `rotscope serve` the real-CLI suites send to: PGlite in `dataDir`, from source, with short
 * quiet and settle times so a session's findings settle within seconds.
 */
export function startScenarioServer(dataDir: string) {
  return startChildServer({
    ROTSCOPE_DATA_DIR: dataDir,
    ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
    ROTSCOPE_SPLIT_EVIDENCE_SETTLE_MS: '1500',
    ROTSCOPE_EVALUATOR_QUIET_MS: '200',
  });
}

/** One OTLP request as the CLI sent it (gzip removed when it was gzipped). */
export interface RecordedBody {
  /** `/v1/traces`, `/v1/logs` or `/v1/metrics`. */
  path: string;
  contentType: string;
  contentEncoding: string | null;
  body: Buffer;
  /** What the server answered. */
  status: number;
}

export interface OtlpRecorder {
  url: string;
  bodies: RecordedBody[];
  close(): Promise<void>;
}

/** An OTLP/HTTP endpoint on loopback that keeps each body and forwards it to `target`. */
export async function startOtlpRecorder(target: string): Promise<OtlpRecorder> {
  const bodies: RecordedBody[] = [];
  const header = (headers: IncomingHttpHeaders, name: string) => {
    const v = headers[name];
    return Array.isArray(v) ? v.join(', ') : (v ?? null);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const encoding = header(req.headers, 'content-encoding');
      const contentType = header(req.headers, 'content-type') ?? 'application/octet-stream';
      const entry: RecordedBody = {
        path: new URL(req.url ?? '/', 'http://recorder').pathname,
        contentType,
        contentEncoding: encoding,
        body: encoding === 'gzip' ? gunzipSync(raw) : raw,
        status: 0,
      };
      bodies.push(entry);
      const forward: Record<string, string> = { 'content-type': contentType };
      if (encoding) forward['content-encoding'] = encoding;
      fetch(`${target}${req.url ?? '/'}`, { method: 'POST', headers: forward, body: raw })
        .then(async (answer) => {
          entry.status = answer.status;
          const type = answer.headers.get('content-type');
          res.writeHead(answer.status, type ? { 'content-type': type } : {});
          res.end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch((error: unknown) => {
          entry.status = 502;
          res.writeHead(502, { 'content-type': 'text/plain' });
          res.end(String(error));
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** A transcript file the CLI wrote, copied out of the session. */
export interface CopiedTranscript {
  /** Relative to the CLI's project folder: `<session>.jsonl` or `<session>/subagents/agent-*.jsonl`. */
  name: string;
  path: string;
  subagent: boolean;
}

export interface ScenarioOutcome {
  runs: RunResult[];
  /** The session id of the last run (null when a run printed none). */
  sessionId: string | null;
  /** Every run exited 0 and printed a session id. */
  ran: boolean;
  /** What the fake API was asked, in order. */
  requests: FakeRequest[];
  /** The settled findings from telemetry (null when the CLI did not run through). */
  telemetry: Seen[] | null;
  /** `rotscope analyze --json` of the main transcript (its sub-agent files are read with it). */
  analyze: {
    code: number | null;
    stderr: string;
    conversationIds: string[];
    findings: Seen[];
  } | null;
  transcripts: CopiedTranscript[];
}

/**
 * Runs a scenario: the CLI against the fake API, its telemetry to `otlpUrl` (default the
 * server itself), then the settled findings, the transcripts copied under `copyTo`, and
 * `rotscope analyze` of them.
 */
export async function runScenario(
  scenario: Scenario,
  options: { binary: string; serverUrl: string; otlpUrl?: string; copyTo: string },
): Promise<ScenarioOutcome> {
  const session = await startClaudeCodeSession({
    binary: options.binary,
    otlpUrl: options.otlpUrl ?? options.serverUrl,
    script: scenario.script,
    ...scenario.options,
  });
  const outcome: ScenarioOutcome = {
    runs: [],
    sessionId: null,
    ran: false,
    requests: session.api.requests,
    telemetry: null,
    analyze: null,
    transcripts: [],
  };
  try {
    for (const run of scenario.runs) {
      const result = await session.run(run.prompt, { resume: run.resume === true });
      outcome.runs.push(result);
      outcome.sessionId = result.sessionId;
      if (result.exitCode !== 0) break;
    }
    outcome.ran =
      outcome.runs.length === scenario.runs.length &&
      outcome.runs.every((r) => r.exitCode === 0) &&
      outcome.sessionId !== null;
    const projects = join(session.configDir, 'projects');
    for (const file of session.transcripts()) {
      const name = relative(projects, file).split('/').slice(1).join('/');
      const to = join(options.copyTo, name);
      mkdirSync(dirname(to), { recursive: true });
      copyFileSync(file, to);
      outcome.transcripts.push({ name, path: to, subagent: name.includes('/subagents/') });
    }
  } finally {
    await session.close();
  }
  if (!outcome.ran) return outcome;
  outcome.telemetry = (await settledFindings(options.serverUrl, outcome.sessionId!)).map(seen);
  const main = outcome.transcripts.filter((t) => !t.subagent).map((t) => t.path);
  const analyzed = await rotscope(['analyze', '--json', ...main]);
  let report: { conversations: Array<{ conversationId: string; findings: RawFinding[] }> } = {
    conversations: [],
  };
  try {
    report = JSON.parse(analyzed.stdout) as typeof report;
  } catch {
    // not JSON: the exit code and stderr say why
  }
  outcome.analyze = {
    code: analyzed.code,
    stderr: analyzed.stderr,
    conversationIds: report.conversations.map((c) => c.conversationId),
    findings: (report.conversations[0]?.findings ?? []).map(seen),
  };
  return outcome;
}

/** The findings expected from the transcript: the scenario's own, else the telemetry's. */
export const expectedFromTranscript = (scenario: Scenario) =>
  scenario.transcript?.findings ?? scenario.telemetry;

/**
 * `rotscope import` of the main transcripts into a fresh data dir, then each session's
 * findings once a `rotscope serve` on that dir has evaluated them (nothing pending, at least
 * `expected[id]` findings, or 20 s passed). Starts and stops its own server.
 */
export async function importAndEvaluate(
  files: string[],
  expected: Map<string, number>,
  dataDir: string,
): Promise<{ code: number | null; stdout: string; stderr: string; findings: Map<string, Seen[]> }> {
  const result = await rotscope(['import', '--data-dir', dataDir, ...files]);
  const findings = new Map<string, Seen[]>();
  if (result.code !== 0) return { ...result, findings };
  const server = await startChildServer({
    ROTSCOPE_DATA_DIR: dataDir,
    ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
    ROTSCOPE_EVALUATOR_QUIET_MS: '200',
  });
  try {
    // the evaluator picks the imported conversations up after its quiet time
    for (const [sessionId, n] of expected)
      findings.set(
        sessionId,
        (await settledFindings(server.url, sessionId, { atLeast: n, timeoutMs: 20_000 })).map(seen),
      );
  } finally {
    server.process.kill('SIGTERM');
    await server.exited;
  }
  return { ...result, findings };
}
