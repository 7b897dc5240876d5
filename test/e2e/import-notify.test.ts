/**
 * `rotscope import --notify` (issue 36 §5): a session that ran while the server was down alerts
 * once it is imported. The real program (bin/rotscope.js) in child processes, from a folder other
 * than the checkout, beside a running `rotscope serve` (on the embedded database the import goes
 * through it; on PostgreSQL it writes beside it) whose alert sends to a webhook receiver on
 * loopback that counts what it gets:
 * - without --notify, the import of a session of 10 minutes ago sends nothing (history);
 * - with --notify, a session of 10 minutes ago is sent, one of 3 days ago is not (older than the
 *   default 24 h); with --notify-hours 96 it would be, and a finding stored already is not sent
 *   again;
 * - bad --notify-hours values and --notify-hours without --notify exit 2 with the reason.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../helpers/child-server.ts';
import { runCli } from '../helpers/cli.ts';
import { startHttpReceiver, type HttpReceiver } from '../helpers/http-receiver.ts';
import { createTestDatabase } from '../helpers/store.ts';

const tmp = mkdtempSync(join(tmpdir(), 'rotscope-e2e-import-notify-'));
/** The user's home folder: the commands run from here, not from the checkout. */
const home = join(tmp, 'home');
let env: Record<string, string>;
let server: ChildServer;
let receiver: HttpReceiver;

/**
 * A Claude Code transcript of one session whose second call is 180k of a 200k window
 * (context_too_full, critical), `minutesAgo` before now.
 */
function transcript(sessionId: string, minutesAgo: number): string {
  const at = (k: number) => new Date(Date.now() - minutesAgo * 60_000 + k * 1_000).toISOString();
  const line = (k: number, type: 'user' | 'assistant', message: object) =>
    JSON.stringify({
      type,
      sessionId,
      uuid: `${sessionId}-${k}`,
      parentUuid: k === 0 ? null : `${sessionId}-${k - 1}`,
      timestamp: at(k),
      cwd: '/home/user/app',
      version: '2.1.332',
      isSidechain: false,
      message,
    });
  const answer = (id: string, context: number) => ({
    id,
    role: 'assistant',
    model: 'claude-sonnet-4-6',
    content: [{ type: 'text', text: 'Working on it.' }],
    stop_reason: 'end_turn',
    usage: {
      input_tokens: 8,
      cache_read_input_tokens: context - 1_008,
      cache_creation_input_tokens: 1_000,
      output_tokens: 40,
    },
  });
  return [
    line(0, 'user', { role: 'user', content: 'Look at the project.' }),
    line(1, 'assistant', answer(`msg-${sessionId}-1`, 40_000)),
    line(2, 'user', { role: 'user', content: 'And now everything else.' }),
    line(3, 'assistant', answer(`msg-${sessionId}-2`, 180_000)),
  ].join('\n');
}

function writeSession(name: string, minutesAgo: number): { file: string; session: string } {
  const session = `notify-${name}-${Math.random().toString(16).slice(2, 10)}`;
  const dir = join(home, '.claude', 'projects', '-home-user-app');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${session}.jsonl`);
  writeFileSync(file, transcript(session, minutesAgo));
  return { file, session };
}

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(
    `${server.url}${path}`,
    body === undefined
      ? { method }
      : { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
  );
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} -> ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** The webhook requests about `session`, once the outbox has nothing left to send. */
async function sentFor(session: string): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { items } = await api<{ items: Array<{ status: string }> }>(
      'GET',
      '/api/deliveries?limit=200',
    );
    if (items.every((d) => d.status === 'delivered' || d.status === 'failed')) break;
    if (Date.now() > deadline) throw new Error('deliveries still pending after 30 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return receiver.requests.filter((r) => r.body.includes(session)).length;
}

const importFrom = (args: string[]) =>
  runCli(['import', ...args], { env: { ...env, HOME: home }, timeoutMs: 120_000 });

beforeAll(async () => {
  mkdirSync(home, { recursive: true });
  receiver = await startHttpReceiver();
  const url = await createTestDatabase();
  env = {
    ...(url ? { DATABASE_URL: url } : { ROTSCOPE_DATA_DIR: join(tmp, 'data') }),
    ROTSCOPE_RETENTION_DAYS: '0',
  };
  server = await startChildServer({
    ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
    ROTSCOPE_EVALUATOR_QUIET_MS: '0',
    ROTSCOPE_EVALUATOR_POLL_MS: '50',
    // the receiver is on loopback
    ROTSCOPE_ALLOW_PRIVATE_ADDRESSES: 'true',
    ...env,
  });
  const channel = await api<{ id: string }>('POST', '/api/channels', {
    type: 'webhook',
    name: 'on-call hook',
    config: { url: `${receiver.url}/hook` },
  });
  await api('PUT', '/api/alerts/context-rot', {
    channels: [{ id: channel.id, minSeverity: 'info' }],
  });
}, 120_000);

afterAll(async () => {
  if (server && server.process.exitCode === null) {
    server.process.kill('SIGTERM');
    await server.exited;
  }
  await receiver?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('rotscope import --notify', () => {
  it('without --notify, a session of 10 minutes ago is history: nothing is sent', async () => {
    const recent = writeSession('quiet', 10);
    const result = await importFrom([recent.file]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('1 finding from history, not sent');
    expect(await sentFor(recent.session)).toBe(0);
  });

  it('sends the findings of the last 24 h, not older ones, and names both', async () => {
    const recent = writeSession('recent', 10);
    const old = writeSession('old', 3 * 24 * 60);
    const result = await importFrom(['--notify', recent.file, old.file]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      "1 finding from the last 24 h sent to the alert's channels (--notify); 1 finding older, not sent",
    );
    expect(await sentFor(recent.session)).toBe(1);
    expect(await sentFor(old.session)).toBe(0);
    const sent = JSON.parse(receiver.requests.find((r) => r.body.includes(recent.session))!.body);
    expect(sent).toMatchObject({
      type: 'finding.created',
      data: { detector: 'context_too_full', severity: 'critical', conversationId: recent.session },
    });

    // The same files again with a longer window: the old session's finding is stored already
    // (from history), so nothing is sent twice and nothing new is sent.
    const again = await importFrom(['--notify', '--notify-hours', '96', recent.file, old.file]);
    expect(again.code, again.stderr).toBe(0);
    expect(await sentFor(recent.session)).toBe(1);
    expect(await sentFor(old.session)).toBe(0);
  });

  it('--notify-hours 96 sends a session of 3 days ago', async () => {
    const old = writeSession('widened', 3 * 24 * 60);
    const result = await importFrom(['--notify', '--notify-hours', '96', old.file]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("1 finding from the last 96 h sent to the alert's channels");
    expect(await sentFor(old.session)).toBe(1);
  });

  it('refuses a bad --notify-hours, and --notify-hours without --notify, with the reason', async () => {
    const { file } = writeSession('refused', 10);
    for (const hours of ['0', '-1', 'soon', '721'])
      expect(await importFrom(['--notify', `--notify-hours=${hours}`, file])).toMatchObject({
        code: 2,
        stderr: `rotscope import: --notify-hours must be a number of hours above 0 and at most 720, got "${hours}"\n`,
      });
    expect(await importFrom(['--notify-hours', '12', file])).toMatchObject({
      code: 2,
      stderr: 'rotscope import: --notify-hours goes with --notify\n',
    });
    // after a space, a negative value reads as a flag: the message says how to write it
    expect(await importFrom(['--notify', '--notify-hours', '-1', file])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        'rotscope import: a value of --notify-hours that starts with a dash is written --notify-hours=VALUE\n',
      ),
    });
  });
});
