/**
 * One Claude Code session, counted once, as a user runs it (issue 19 §4): a real `rotscope
 * serve` child process receives the real CLI's telemetry and the compaction spans `rotscope hook`
 * sent for it (test/fixtures/real/claude-code-one-session/, newest captured version), with a
 * webhook channel on a loopback receiver; the real `rotscope import` (bin/rotscope.js) reads the
 * session's transcript where Claude Code keeps it. Telemetry first: the import merges into the
 * stored calls and compactions, adds the cut tool's name, makes no second finding and sends
 * nothing. Import first: the findings are history (the call's time, never sent), and telemetry
 * arriving afterwards changes neither the count of calls, compactions or findings nor sends.
 *
 * On the embedded PGlite the server owns the data directory, so it stops for the import and
 * starts again (import refuses otherwise); on PostgreSQL (DATABASE_URL) the import runs beside it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/db.ts';
import { postOtlp } from '../helpers/capture-replay.ts';
import { runCli } from '../helpers/cli.ts';
import { startChildServer, type ChildServer } from '../helpers/child-server.ts';
import { startHttpReceiver, type HttpReceiver } from '../helpers/http-receiver.ts';
import {
  loadOneSession,
  ONE_SESSION_VERSIONS,
  writeTranscript,
  type OneSession,
} from '../helpers/one-session.ts';
import { createTestDatabase } from '../helpers/store.ts';
import { evaluationSettled } from '../helpers/seen-findings.ts';

const session: OneSession = loadOneSession(ONE_SESSION_VERSIONS.at(-1)!);
const tmp = mkdtempSync(join(tmpdir(), 'rotscope-e2e-one-session-'));
const transcript = writeTranscript(session, join(tmp, 'claude'));
let receiver: HttpReceiver;

beforeAll(async () => {
  receiver = await startHttpReceiver();
});
afterAll(async () => {
  await receiver?.close();
  rmSync(tmp, { recursive: true, force: true });
});

interface Backend {
  env: Record<string, string>;
  postgres: boolean;
}

async function backend(name: string): Promise<Backend> {
  const url = await createTestDatabase();
  return url
    ? { env: { DATABASE_URL: url }, postgres: true }
    : { env: { ROTSCOPE_DATA_DIR: join(tmp, name) }, postgres: false };
}

function serve(b: Backend): Promise<ChildServer> {
  return startChildServer({
    ...b.env,
    ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
    ROTSCOPE_ALLOW_PRIVATE_ADDRESSES: 'true',
    ROTSCOPE_EVALUATOR_QUIET_MS: '200',
    ROTSCOPE_SPLIT_EVIDENCE_SETTLE_MS: '2000',
  });
}

async function stop(server: ChildServer): Promise<void> {
  server.process.kill('SIGTERM');
  await server.exited;
}

async function api<T>(server: ChildServer, method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} -> ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** A webhook channel on the receiver, attached to the Context rot alert for every severity. */
async function attachWebhook(server: ChildServer, path: string): Promise<void> {
  const channel = await api<{ id: string }>(server, 'POST', '/api/channels', {
    type: 'webhook',
    name: 'team hook',
    config: { url: `${receiver.url}${path}` },
  });
  await api(server, 'PUT', '/api/alerts/context-rot', {
    channels: [{ id: channel.id, minSeverity: 'info' }],
  });
}

/** Claude Code's exports and the hook's spans, in the order they reached the capture's sink. */
async function sendTelemetryAndHooks(server: ChildServer): Promise<void> {
  const bodies = [...session.telemetry, ...session.hook].sort((a, b) => a.n - b.n);
  for (const body of bodies) await postOtlp(server.url, body.signal, body.text);
}

interface FindingJson {
  detector: string;
  severity: string;
  kind?: string | null;
  createdAt: string;
  details: Record<string, unknown>;
}

/** The session's findings once the server has judged everything stored of it. */
async function settledFindings(server: ChildServer): Promise<FindingJson[]> {
  await evaluationSettled(server.url, session.sessionId);
  return (
    await api<{ items: FindingJson[] }>(
      server,
      'GET',
      `/api/findings?conversationId=${session.sessionId}&limit=200`,
    )
  ).items;
}

/** What the receiver got on `path` once the server's outbox has nothing left to send. */
async function sentTo(server: ChildServer, path: string): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const page = await api<{ items: Array<{ status: string }> }>(
      server,
      'GET',
      '/api/deliveries?limit=200',
    );
    if (!page.items.some((d) => d.status === 'pending') || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return receiver.requests.filter((r) => r.path === path).length;
}

/** Rows of the session, read straight from the store. */
async function rows(b: Backend) {
  const store = await openStore({
    databaseUrl: b.env.DATABASE_URL,
    dataDir: b.env.ROTSCOPE_DATA_DIR ?? join(tmp, 'unused'),
  });
  try {
    const calls = await store.db
      .selectFrom('llm_calls')
      .select(['request_id', 'producer', 'context_tokens', 'output_tool_name', 'finish_reason_raw'])
      .where('conversation_id', '=', session.sessionId)
      .orderBy('start_ns')
      .execute();
    const compactions = await store.db
      .selectFrom('compactions')
      .select(['trigger', 'evidence', 'sources'])
      .where('conversation_id', '=', session.sessionId)
      .orderBy('at_ns')
      .execute();
    return { calls, compactions };
  } finally {
    await store.close();
  }
}

const kinds = (findings: FindingJson[]) =>
  findings.map((f) => `${f.detector}/${f.kind ?? ''}`).sort();

describe(
  'one Claude Code session from telemetry, hooks and `rotscope import`',
  { timeout: 420_000 },
  () => {
    it('telemetry and hooks first, then the import: merged, no second finding, nothing sent again', async () => {
      const b = await backend('telemetry-first');
      let server: ChildServer | undefined = await serve(b);
      /** The embedded store has one owner: the server stops while the test or the import reads it. */
      const pause = async () => {
        if (b.postgres || !server) return;
        await stop(server);
        server = undefined;
      };
      const resume = async () => {
        server ??= await serve(b);
        return server;
      };
      try {
        await attachWebhook(server, '/telemetry-first');
        await sendTelemetryAndHooks(server);
        const live = await settledFindings(server);
        expect(live.length).toBeGreaterThan(0);
        expect(new Set(live.map((f) => f.detector)).size).toBe(live.length);
        await receiver.waitFor(live.length, 30_000);
        const sentLive = await sentTo(await resume(), '/telemetry-first');
        expect(sentLive).toBe(live.length);
        await pause();
        const before = await rows(b);
        expect(before.compactions).toHaveLength(2);
        expect(before.calls.every((c) => c.output_tool_name === null)).toBe(true);

        const imported = await runCli(['import', transcript], { env: b.env });
        expect(imported.code, imported.stderr).toBe(0);
        const transcriptCalls = Number(/: (\d+) calls/.exec(imported.stdout)?.[1]);
        expect(imported.stdout).toContain(
          `(${transcriptCalls} calls stored already, by telemetry: merged, not added)`,
        );
        // the import learnt which tool call was cut: output_cut_off is raised, as history (on
        // PostgreSQL the running server's evaluator may be the one that raises it)
        expect(imported.stdout).toMatch(
          b.postgres
            ? /\n[01] findings? from history, not sent\n/
            : /\n1 finding from history, not sent\n/,
        );
        const after = await settledFindings(await resume());
        expect(kinds(after)).toEqual(kinds(live));
        expect(after.find((f) => f.detector === 'output_cut_off')!.severity).toBe('critical');
        expect(await sentTo(await resume(), '/telemetry-first')).toBe(sentLive);
        await pause();
        const merged = await rows(b);
        expect(merged.calls.map((c) => c.request_id)).toEqual(
          before.calls.map((c) => c.request_id),
        );
        expect(merged.calls.map((c) => c.context_tokens)).toEqual(
          before.calls.map((c) => c.context_tokens),
        );
        expect(
          merged.calls.find((c) => c.finish_reason_raw === 'max_tokens')!.output_tool_name,
        ).toBe('Write');
        expect(merged.compactions.map((c) => c.trigger)).toEqual(['auto', 'manual']);
        for (const c of merged.compactions)
          expect((c.sources as Array<{ evidence: string }>).map((s) => s.evidence).sort()).toEqual([
            'claude_code_event',
            'span',
            'transcript_boundary',
          ]);

        // the same import again: nothing changes
        const again = await runCli(['import', transcript], { env: b.env });
        expect(again.code, again.stderr).toBe(0);
        expect(again.stdout).toContain('\n0 findings from history, not sent\n');
        expect(await rows(b)).toEqual(merged);
        expect(kinds(await settledFindings(await resume()))).toEqual(kinds(live));
        expect(await sentTo(await resume(), '/telemetry-first')).toBe(sentLive);
      } finally {
        if (server) await stop(server);
      }
    });

    it('the import first, then telemetry and hooks: history, the same rows, nothing sent', async () => {
      const b = await backend('import-first');
      const imported = await runCli(['import', transcript], { env: b.env });
      expect(imported.code, imported.stderr).toBe(0);
      const fromHistory = Number(
        /\n(\d+) findings? from history, not sent\n/.exec(imported.stdout)?.[1],
      );
      expect(fromHistory).toBeGreaterThan(0);
      const server = await serve(b);
      try {
        await attachWebhook(server, '/import-first');
        const history = await settledFindings(server);
        expect(history).toHaveLength(fromHistory);
        // stored with the calls' time (the session's, not the import's)
        const started = Date.now() - 600_000;
        for (const f of history) expect(Date.parse(f.createdAt)).toBeLessThan(started);

        await sendTelemetryAndHooks(server);
        const after = await settledFindings(server);
        expect(kinds(after)).toEqual(kinds(history));
        expect(after.map((f) => f.createdAt).sort()).toEqual(
          history.map((f) => f.createdAt).sort(),
        );
        expect(await sentTo(server, '/import-first')).toBe(0);
      } finally {
        await stop(server);
      }
      const { calls, compactions } = await rows(b);
      expect(new Set(calls.map((c) => c.request_id)).size).toBe(calls.length);
      // telemetry's rows: its spans own every call, the compaction's summarising calls included
      expect(calls.every((c) => c.producer === 'claude_code')).toBe(true);
      expect(compactions).toHaveLength(2);
    });
  },
);
