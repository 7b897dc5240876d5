/**
 * `rotscope import ~/.claude/projects` beside a running `rotscope serve` (issue 23 §2), as a
 * Claude Code user runs it: the real program (bin/rotscope.js) in child processes. On the
 * embedded database the server holds the data directory, so the import goes through it
 * (POST /api/import, /api/import/evaluate); on PostgreSQL (DATABASE_URL) the import writes to
 * the database beside it. Either way it prints exactly what an import with no server prints,
 * stores the same rows (compared through the API of both), adds nothing when run again, and its
 * findings are history even though the server's evaluator polls every 50 ms with no quiet
 * time: it leaves the imported conversations to the import. Once tokens exist it needs an
 * ingest token of the workspace and says so; beside a holder that serves no HTTP it refuses,
 * saying what to do. Beside a busy server (issue 33), imports past the concurrency cap or the
 * byte budget get 429 with Retry-After and an import over the size limit 413, all from their
 * headers; the command waits and sends the file again, and names a file that is too large.
 */
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_FILE } from '../../src/store/data-dir-lock.ts';
import { startChildServer, type ChildServer } from '../helpers/child-server.ts';
import { BIN, runCli } from '../helpers/cli.ts';
import { loadOneSession, ONE_SESSION_VERSIONS, writeTranscript } from '../helpers/one-session.ts';
import { createTestDatabase, usingPostgres } from '../helpers/store.ts';

const SIDECHAINS = fileURLToPath(
  new URL('../fixtures/real/claude-code_transcript_sidechains.jsonl', import.meta.url),
);
const SIDECHAINS_SESSION = 'fe5e1c67-53e7-4862-81ae-d0e013e3270b';

const tmp = mkdtempSync(join(tmpdir(), 'rotscope-e2e-import-server-'));
/** `~/.claude/projects` with two sessions, where Claude Code keeps them. */
const projects = join(tmp, 'claude', 'projects');
const sidechains = join(projects, '-path-to-Demo-todo-app', `${SIDECHAINS_SESSION}.jsonl`);
const oneSession = loadOneSession(ONE_SESSION_VERSIONS.at(-1)!);

/**
 * A fresh store. Retention is off for the command and the server alike: a server prunes the
 * transcript's 2025 calls 10 s after it starts, and the rows are compared later than that.
 */
async function backend(name: string): Promise<Record<string, string>> {
  const url = await createTestDatabase();
  return {
    ...(url ? { DATABASE_URL: url } : { ROTSCOPE_DATA_DIR: join(tmp, name) }),
    ROTSCOPE_RETENTION_DAYS: '0',
  };
}

/** A server whose evaluator would take any settled conversation at once. */
function serve(env: Record<string, string>): Promise<ChildServer> {
  return startChildServer({
    ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
    ROTSCOPE_EVALUATOR_QUIET_MS: '0',
    ROTSCOPE_EVALUATOR_POLL_MS: '50',
    ROTSCOPE_SPLIT_EVIDENCE_SETTLE_MS: '0',
    ...env,
  });
}

async function stop(server: ChildServer | undefined): Promise<void> {
  if (!server || server.process.exitCode !== null) return;
  server.process.kill('SIGTERM');
  await server.exited;
}

async function api<T>(server: ChildServer, path: string, token?: string): Promise<T> {
  const response = await fetch(`${server.url}${path}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`GET ${path} -> ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

interface FindingJson {
  detector: string;
  severity: string;
  kind: string | null;
  conversationId: string;
  runId: string;
  createdAt: string;
  summary: string;
}

/** What the server holds for the imported sessions: conversations, their calls, the findings. */
async function stored(server: ChildServer, token?: string) {
  const { items } = await api<{ items: Array<{ id: string }> }>(
    server,
    '/api/conversations?limit=500',
    token,
  );
  const conversations = [];
  for (const summary of [...items].sort((a, b) => a.id.localeCompare(b.id)))
    conversations.push({
      summary,
      detail: await api(server, `/api/conversations/${encodeURIComponent(summary.id)}`, token),
    });
  const findings = (
    await api<{ items: FindingJson[] }>(server, '/api/findings?limit=200', token)
  ).items
    .map((f) => ({
      detector: f.detector,
      severity: f.severity,
      kind: f.kind,
      conversationId: f.conversationId,
      runId: f.runId,
      createdAt: f.createdAt,
      summary: f.summary,
    }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  const deliveries = await api<{ items: unknown[] }>(server, '/api/deliveries?limit=200', token);
  return { conversations, findings, deliveries: deliveries.items };
}

beforeAll(() => {
  mkdirSync(join(projects, '-path-to-Demo-todo-app'), { recursive: true });
  copyFileSync(SIDECHAINS, sidechains);
  writeTranscript(oneSession, join(tmp, 'claude'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('rotscope import beside a running serve', { timeout: 600_000 }, () => {
  let withServer: Record<string, string>;
  let server: ChildServer | undefined;
  let alone: Record<string, string>;
  let aloneServer: ChildServer | undefined;
  let firstRun = '';
  let rows: Awaited<ReturnType<typeof stored>>;
  let again = '';
  let adminToken = '';
  let ingestToken = '';

  beforeAll(async () => {
    [withServer, alone] = await Promise.all([backend('with-server'), backend('alone')]);
    server = await serve(withServer);
  }, 180_000);
  afterAll(async () => {
    await stop(server);
    await stop(aloneServer);
  });

  it('prints what an import with no server prints, and stores the same rows', async () => {
    const through = await runCli(['import', projects], { env: withServer });
    expect(through.code, through.stderr).toBe(0);
    // the server's log names why, should it have refused or failed an evaluation
    if (usingPostgres) expect(through.stderr, server!.output()).toBe('');
    else
      expect(through.stderr, server!.output()).toBe(
        `rotscope import: the data directory ${withServer.ROTSCOPE_DATA_DIR} is held by the running ` +
          `server (pid ${server!.process.pid}, ${server!.url}): importing through it\n`,
      );
    firstRun = through.stdout;
    // a folder stands for the transcripts under it, each with its sub-agents
    expect(firstRun).toContain(
      `${sidechains}: 170 calls, 167 tool results, 0 compactions in 1 conversation\n`,
    );
    expect(firstRun).toContain(`${oneSession.sessionId}.jsonl: `);
    const history = /^(\d+) findings? from history, not sent$/m.exec(firstRun);
    expect(Number(history?.[1])).toBeGreaterThanOrEqual(2);

    const direct = await runCli(['import', projects], { env: alone });
    expect(direct.code, direct.stderr).toBe(0);
    expect(direct.stderr).toBe('');
    expect(direct.stdout).toBe(firstRun);

    aloneServer = await serve(alone);
    rows = await stored(server!);
    expect(rows.conversations.map((c) => c.summary)).toContainEqual(
      expect.objectContaining({ id: SIDECHAINS_SESSION, calls: 170, streams: 6 }),
    );
    expect(rows.findings.length).toBe(Number(history![1]));
    // findings from history carry their call's time and are never sent
    expect(rows.findings.filter((f) => f.conversationId === SIDECHAINS_SESSION)).toHaveLength(2);
    for (const f of rows.findings.filter((f) => f.conversationId === SIDECHAINS_SESSION))
      expect(f.createdAt).toMatch(/^2025-09-03T0[01]:/);
    expect(rows.deliveries).toEqual([]);
    expect(await stored(aloneServer)).toEqual(rows);
  });

  it('adds nothing when run again', async () => {
    const result = await runCli(['import', projects], { env: withServer });
    expect(result.code, result.stderr).toBe(0);
    again = result.stdout;
    expect(again).toContain(
      `${sidechains}: 170 calls, 167 tool results, 0 compactions in 1 conversation\n`,
    );
    expect(again).toMatch(/^0 findings from history, not sent$/m);
    expect(await stored(server!)).toEqual(rows);
  });

  it('once tokens exist, needs an ingest token of the workspace, and says so', async () => {
    const admin = await runCli(['token', 'create', '--workspace', 'default', '--scope', 'admin'], {
      env: withServer,
    });
    expect(admin.code, admin.stderr).toBe(0);
    adminToken = admin.stdout.trim();
    const ingest = await runCli(
      ['token', 'create', '--workspace', 'default', '--scope', 'ingest', '--token', adminToken],
      { env: withServer },
    );
    expect(ingest.code, ingest.stderr).toBe(0);
    ingestToken = ingest.stdout.trim();

    if (!usingPostgres) {
      const pid = server!.process.pid;
      const without = await runCli(['import', projects], { env: withServer });
      expect(without.code).toBe(1);
      expect(without.stdout).toBe('');
      expect(without.stderr).toContain(
        `the running server (pid ${pid}, ${server!.url}) answered 401: missing bearer token; ` +
          'pass an ingest or admin token of the workspace with --token (or ROTSCOPE_TOKEN), ' +
          `or stop the server (pid ${pid}) and run this again`,
      );
      const elsewhere = await runCli(['import', projects, '--workspace', 'other'], {
        env: { ...withServer, ROTSCOPE_TOKEN: ingestToken },
      });
      expect(elsewhere.code).toBe(1);
      expect(elsewhere.stdout).toBe('');
      expect(elsewhere.stderr).toContain('answered 403: this token belongs to workspace "default"');
      // the refused import is one of the refusals the Coverage page shows
      await expect
        .poll(
          async () =>
            (
              await api<{ refusals: { items: Array<{ route: string; reason: string }> } }>(
                server!,
                '/api/coverage',
                adminToken,
              )
            ).refusals.items,
          { timeout: 10_000 },
        )
        .toContainEqual(
          expect.objectContaining({ route: 'POST /api/import', reason: 'missing_token' }),
        );
    }

    const withToken = await runCli(['import', projects, '--token', ingestToken], {
      env: withServer,
    });
    expect(withToken.code, withToken.stderr).toBe(0);
    expect(withToken.stdout).toBe(again);
    expect(await stored(server!, adminToken)).toEqual(rows);
  });

  it.skipIf(usingPostgres)(
    "notes the calls older than the server's retention, which is the one that removes them",
    async () => {
      const env = { ROTSCOPE_DATA_DIR: join(tmp, 'retention') };
      const retaining = await serve({ ...env, ROTSCOPE_RETENTION_DAYS: '30' });
      try {
        // the command's own setting is not the server's: the server's is named
        const result = await runCli(['import', sidechains], {
          env: { ...env, ROTSCOPE_RETENTION_DAYS: '0' },
        });
        expect(result.code, result.stderr).toBe(0);
        expect(result.stdout).toBe(
          `${sidechains}: 170 calls, 167 tool results, 0 compactions in 1 conversation\n` +
            '2 findings from history, not sent\n' +
            'note: 170 of the calls are older than the retention window (30 days, ' +
            "ROTSCOPE_RETENTION_DAYS): a server's retention removes them, with their tool results " +
            'and compactions, at its next run; their findings stay (ROTSCOPE_RETENTION_DAYS=0 keeps everything)\n',
        );
      } finally {
        await stop(retaining);
      }
    },
  );

  it.skipIf(usingPostgres)(
    'refuses beside a holder that serves no HTTP, saying what to do, and writes nothing',
    async () => {
      const dataDir = join(tmp, 'held-by-a-command');
      mkdirSync(dataDir);
      // a live process (this one) holds the directory without serving: another command, or a
      // server that does not listen yet
      const holder = {
        pid: process.pid,
        port: null,
        url: null,
        startedAt: new Date().toISOString(),
      };
      writeFileSync(join(dataDir, LOCK_FILE), JSON.stringify(holder));
      const result = await runCli(['import', projects], { env: { ROTSCOPE_DATA_DIR: dataDir } });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(
        `is in use by rotscope (pid ${process.pid}, not serving HTTP, since ${holder.startedAt}), ` +
          'which serves no API to import through',
      );
      expect(result.stderr).toContain(`wait until it ends (pid ${process.pid})`);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(readdirSync(dataDir)).toEqual([LOCK_FILE]);
    },
  );
});

/** An import whose headers (and first `sentBytes` of body) are sent, the rest held. */
interface Held {
  /** The answer, as soon as the server gives it, whether or not the body was all sent. */
  answer: Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>;
  /** Sends the rest of the body. */
  finish(): void;
}

function holdImport(url: string, body: Buffer, sentBytes: number): Held {
  const target = new URL(`${url}/api/import`);
  let request!: http.ClientRequest;
  const answer = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>(
    (resolve, reject) => {
      request = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          agent: false,
          headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }),
          );
        },
      );
      request.on('error', (error) => (request.writableEnded ? undefined : reject(error)));
      request.flushHeaders();
      if (sentBytes > 0) request.write(body.subarray(0, sentBytes));
    },
  );
  answer.catch(() => {});
  return { answer, finish: () => request.end(body.subarray(sentBytes)) };
}

/**
 * Waits until the server's byte budget holds exactly `bytes` (its `rotscope_ingest_inflight_bytes`
 * gauge): an import is admitted once its reservation (5 times its body) is in the budget.
 */
async function untilBytesInFlight(url: string, bytes: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last = '';
  for (;;) {
    const text = await (await fetch(`${url}/metrics`)).text();
    last = /^rotscope_ingest_inflight_bytes (\d+)/m.exec(text)?.[1] ?? text.slice(0, 200);
    if (Number(last) === bytes) return;
    if (Date.now() > deadline)
      throw new Error(`rotscope_ingest_inflight_bytes: ${last}, not ${bytes}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('rotscope import beside a busy serve', { timeout: 60_000 }, () => {
  const KiB = 1024;
  const dataDir = join(tmp, 'busy');
  const file = (name: string, bytes: number) => {
    const lines = readFileSync(SIDECHAINS, 'utf8').split('\n');
    let text = '';
    for (const line of lines) {
      if (text.length + line.length + 1 > bytes) break;
      text += `${line}\n`;
    }
    const path = join(tmp, name);
    writeFileSync(path, text);
    return { path, body: Buffer.from(JSON.stringify({ path, text })) };
  };
  // at most 512 KiB a body, two imports, 1 MiB of budget: two medium imports (5 times ~150 KiB
  // each) do not fit together, a medium and a small one do
  let medium: ReturnType<typeof file>;
  let small: ReturnType<typeof file>;
  let server: ChildServer | undefined;

  beforeAll(async () => {
    medium = file('medium.jsonl', 140 * KiB);
    small = file('small.jsonl', 20 * KiB);
    expect(medium.body.length * 5).toBeGreaterThan(512 * KiB);
    expect((medium.body.length + small.body.length) * 5).toBeLessThan(1024 * KiB);
    server = await serve({
      ROTSCOPE_DATA_DIR: dataDir,
      DATABASE_URL: '',
      ROTSCOPE_RETENTION_DAYS: '0',
      ROTSCOPE_MAX_IMPORT_BODY_BYTES: String(512 * KiB),
      ROTSCOPE_MAX_INFLIGHT_IMPORTS: '2',
      ROTSCOPE_MAX_INFLIGHT_BYTES: String(1024 * KiB),
      ROTSCOPE_MAX_WORKSPACE_INFLIGHT_BYTES: String(1024 * KiB),
      ROTSCOPE_RETRY_AFTER_SECONDS: '1',
    });
  }, 60_000);
  afterAll(() => stop(server));

  it('answers 429 with Retry-After past the budget or the cap, 413 over the limit, from the headers', async () => {
    const url = server!.url;
    const first = holdImport(url, medium.body, 100);
    await untilBytesInFlight(url, medium.body.length * 5); // admitted before the next
    // nothing of the bodies below is sent: the answers come from their headers
    const overBudget = await holdImport(url, medium.body, 0).answer;
    expect(overBudget.status).toBe(429);
    expect(overBudget.headers['retry-after']).toBe('1');
    expect(overBudget.headers.connection).toBe('close');
    expect(JSON.parse(overBudget.body)).toEqual({
      error: 'too_many_requests',
      message: expect.stringContaining('over the budget'),
    });
    const second = holdImport(url, small.body, 100);
    await untilBytesInFlight(url, (medium.body.length + small.body.length) * 5);
    const overCap = await holdImport(url, small.body, 0).answer;
    expect(overCap.status).toBe(429);
    expect(overCap.headers['retry-after']).toBe('1');
    expect(JSON.parse(overCap.body).message).toBe(
      '2 imports in progress already (ROTSCOPE_MAX_INFLIGHT_IMPORTS): retry after 1 s',
    );
    const tooLarge = await holdImport(url, Buffer.alloc(512 * KiB + 1, ' '), 0).answer;
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.headers.connection).toBe('close');
    expect(JSON.parse(tooLarge.body).message).toBe(
      `an import body of ${512 * KiB + 1} bytes is over this server's limit of ${512 * KiB} bytes (ROTSCOPE_MAX_IMPORT_BODY_BYTES)`,
    );

    first.finish();
    second.finish();
    expect((await first.answer).status).toBe(200);
    expect((await second.answer).status).toBe(200);
    // every reservation was given back: a medium import fits beside a small one held again
    const third = holdImport(url, small.body, 100);
    await untilBytesInFlight(url, small.body.length * 5);
    const fourth = await holdImport(url, medium.body, medium.body.length).answer;
    expect(fourth.status, fourth.body).toBe(200);
    third.finish();
    expect((await third.answer).status).toBe(200);
  });

  it.skipIf(usingPostgres)(
    'the command waits out a 429 and sends the file again; a file over the limit is named',
    async () => {
      const held = holdImport(server!.url, medium.body, 100);
      await untilBytesInFlight(server!.url, medium.body.length * 5);
      const command = spawn(process.execPath, [BIN, 'import', medium.path], {
        env: {
          ...process.env,
          DATABASE_URL: '',
          ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
          ROTSCOPE_DATA_DIR: dataDir,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      command.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const waiting = new Promise<void>((resolve) =>
        command.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (stderr.includes('sending it again')) resolve();
        }),
      );
      const code = new Promise<number | null>((resolve) => command.on('close', resolve));
      await Promise.race([waiting, code]);
      expect(stderr).toContain(
        `has no room for ${medium.path} yet (429: ingest bytes in flight over the budget`,
      );
      expect(stderr).toContain('sending it again in 1 s\n');
      held.finish();
      expect((await held.answer).status).toBe(200);
      expect(await code, stderr).toBe(0);
      expect(stdout).toMatch(new RegExp(`^${medium.path}: \\d+ calls, `));

      const big = await runCli(['import', sidechains], { env: { ROTSCOPE_DATA_DIR: dataDir } });
      expect(big.code).toBe(1);
      expect(big.stderr).toContain(
        `rotscope import: ${sidechains}: 1 MiB to send, more than the running server (pid ${server!.process.pid}, ${server!.url}) takes in one import ` +
          `(an import body of `,
      );
      expect(big.stderr).toContain(
        `(ROTSCOPE_MAX_IMPORT_BODY_BYTES)): stop the server (pid ${server!.process.pid}) and import it again\n`,
      );
    },
  );
});
