/**
 * Runs one scenario (scenarios.ts) with the real Gemini CLI and collects what rotscope made of it:
 * the findings a real `rotscope serve` settled on from the CLI's telemetry, and the stored
 * conversation. Used by real-cli.test.ts (which asserts) and by capture.ts (which also keeps what
 * the CLI sent, as fixtures); neither hides a failure: a run that did not exit 0, or a session id
 * that changed across runs, comes back as such.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { basename, join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { startGeminiSession, type GeminiRunResult } from '../../helpers/gemini-cli.ts';
import type { GeminiRequest } from '../../helpers/fake-gemini.ts';
import type { Scenario, Seen, Stored } from './scenarios.ts';
import { seen, settledFindings } from '../../helpers/seen-findings.ts';

export {
  describeSeen,
  seen,
  settledFindings,
  sorted,
  type RawFinding,
} from '../../helpers/seen-findings.ts';

interface StoredCall {
  sideCall: string | null;
  finishReasonRaw: string | null;
  outputToolCall: boolean | null;
  startNs: string;
}

/** The stored conversation in the shape scenarios compare (null when it is not stored). */
export async function storedOf(serverUrl: string, sessionId: string): Promise<Stored | null> {
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
      .filter((c) => c.finishReasonRaw !== null && c.finishReasonRaw !== 'stop')
      .map(
        (c) =>
          `${c.finishReasonRaw}${c.outputToolCall === true ? '+tool' : c.outputToolCall === null ? '?tool' : ''}`,
      ),
  };
}

export interface ScenarioOutcome {
  runs: GeminiRunResult[];
  /** The session id of the first run (null when it printed none). */
  sessionId: string | null;
  /** Every run exited 0 and printed the same session id. */
  ran: boolean;
  /** What the fake API was asked, in order. */
  requests: GeminiRequest[];
  /** The settled findings (null when the CLI did not run through). */
  findings: Seen[] | null;
  stored: Stored | null;
  /** The chat files the CLI wrote (`~/.gemini/tmp/<project>/chats/session-*.jsonl`), read before its HOME went. */
  chatFiles: Array<{ name: string; text: string }>;
}

/** The chat files under a Gemini CLI HOME, sorted by name. */
function chatFilesOf(homeDir: string): Array<{ name: string; text: string }> {
  const tmp = join(homeDir, '.gemini', 'tmp');
  if (!existsSync(tmp)) return [];
  return readdirSync(tmp, { recursive: true, encoding: 'utf8' })
    .filter((p) => /(^|\/)chats\/session-[^/]*\.jsonl$/.test(p))
    .sort()
    .map((p) => ({ name: basename(p), text: readFileSync(join(tmp, p), 'utf8') }));
}

/**
 * Runs a scenario: the CLI against the fake API, its telemetry to `otlpUrl` (default the server
 * itself), then the settled findings and the stored conversation from `serverUrl`.
 */
export async function runScenario(
  scenario: Scenario,
  options: { entry: string; serverUrl: string; otlpUrl?: string },
): Promise<ScenarioOutcome> {
  const session = await startGeminiSession({
    entry: options.entry,
    otlpUrl: options.otlpUrl ?? options.serverUrl,
    script: scenario.script,
    ...scenario.options,
  });
  const outcome: ScenarioOutcome = {
    runs: [],
    sessionId: null,
    ran: false,
    requests: session.api.requests,
    findings: null,
    stored: null,
    chatFiles: [],
  };
  try {
    for (const run of scenario.runs) {
      const result = await session.run(run.prompt, { resume: run.resume === true });
      outcome.runs.push(result);
      outcome.sessionId ??= result.sessionId;
      if (result.exitCode !== 0) break;
    }
    outcome.chatFiles = chatFilesOf(session.homeDir);
  } finally {
    await session.close();
  }
  outcome.ran =
    outcome.runs.length === scenario.runs.length &&
    outcome.runs.every((r) => r.exitCode === 0 && r.sessionId === outcome.sessionId) &&
    outcome.sessionId !== null;
  if (!outcome.ran) return outcome;
  outcome.findings = (await settledFindings(options.serverUrl, outcome.sessionId!)).map(seen);
  outcome.stored = await storedOf(options.serverUrl, outcome.sessionId!);
  return outcome;
}

/** One OTLP request as it reached the recorder: its path and Authorization header. */
export interface SeenRequest {
  path: string;
  authorization: string | null;
}

/** An OTLP/HTTP endpoint on loopback that notes each request's headers and forwards it to `target`. */
export async function startHeaderRecorder(target: string) {
  const seenRequests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const auth = req.headers.authorization;
      seenRequests.push({ path: req.url ?? '/', authorization: auth ?? null });
      const headers: Record<string, string> = {
        'content-type': req.headers['content-type'] ?? 'application/json',
      };
      if (req.headers['content-encoding'])
        headers['content-encoding'] = req.headers['content-encoding'];
      fetch(`${target}${req.url ?? '/'}`, { method: 'POST', headers, body: Buffer.concat(chunks) })
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
