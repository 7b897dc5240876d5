/**
 * Channel secrets at rest (issue 10, item 4), through the real `rotscope` command: secrets sent
 * to the API never reach the database files in clear (PGlite data directory, WAL included) nor
 * a pg_dump of PostgreSQL; a row stored in plaintext by an older version is sealed when serve
 * starts; `rotscope secrets rotate` re-seals under a new key and the channels still send.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { startChildServer, type ChildServer } from '../helpers/child-server.ts';
import { runCli } from '../helpers/cli.ts';
import { startHttpReceiver, type HttpReceiver } from '../helpers/http-receiver.ts';
import { createTestDatabase } from '../helpers/store.ts';

const run = promisify(execFile);

/** Strings no database file may hold. Random, so a hit cannot come from elsewhere. */
const secret = (label: string) => `${label}${randomBytes(12).toString('hex')}`;
const HEADER_TOKEN = secret('hdrtoken');
const SLACK_TOKEN = secret('slacktoken');
const SMTP_PASSWORD = secret('smtppass');
const SIGNING_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const LEGACY_TOKEN = secret('legacytoken');
const LEGACY_SIGNING_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
/** A public value stored beside them: the scan must find it, or it proves nothing. */
const CHANNEL_NAME = secret('publicname');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(full) : entry.isFile() ? [full] : [];
  });
}

/** The files under `dir` that contain `needle`. */
function filesHolding(dir: string, needle: string): string[] {
  const bytes = Buffer.from(needle);
  return filesUnder(dir).filter((file) => readFileSync(file).includes(bytes));
}

async function call(
  server: ChildServer,
  method: string,
  url: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${server.url}${url}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {} };
}

/** Creates the three kinds of channel; returns the webhook's id. */
async function createChannels(server: ChildServer, receiver: HttpReceiver): Promise<string> {
  const webhook = await call(server, 'POST', '/api/channels', {
    type: 'webhook',
    name: CHANNEL_NAME,
    config: {
      url: `${receiver.url}/hook`,
      secret: SIGNING_SECRET,
      headers: { 'x-api-key': HEADER_TOKEN },
    },
  });
  expect(webhook.status).toBe(201);
  const slack = await call(server, 'POST', '/api/channels', {
    type: 'slack',
    name: 'slack',
    config: { webhookUrl: `https://hooks.slack.com/services/T000/B000/${SLACK_TOKEN}` },
  });
  expect(slack.status).toBe(201);
  const email = await call(server, 'POST', '/api/channels', {
    type: 'email',
    name: 'email',
    config: {
      host: 'smtp.example.com',
      port: 587,
      secure: false,
      user: 'alerts',
      password: SMTP_PASSWORD,
      from: 'alerts@example.com',
      to: ['oncall@example.com'],
    },
  });
  expect(email.status).toBe(201);
  return String(webhook.body.id);
}

/** A test send through the channel: the receiver must get the header value sealed in it. */
async function expectSendWorks(
  server: ChildServer,
  receiver: HttpReceiver,
  id: string,
  header: string,
): Promise<void> {
  const before = receiver.requests.length;
  const tested = await call(server, 'POST', `/api/channels/${id}/test`);
  expect(tested.body).toMatchObject({ ok: true });
  const [request] = (await receiver.waitFor(before + 1)).slice(before);
  expect(request!.headers['x-api-key']).toBe(header);
}

/** Inserts a channel the way versions before sealing stored it: secrets in plaintext jsonb. */
async function insertLegacyChannel(
  options: { dataDir: string; databaseUrl?: string },
  url: string,
) {
  const store = await openStore(options);
  try {
    await migrate(store.db);
    const row = await store.db
      .insertInto('channels')
      .values({
        workspace_id: 'default',
        type: 'webhook',
        name: 'legacy',
        config: JSON.stringify({ url, headerNames: ['x-api-key'] }),
        secrets: JSON.stringify({
          secret: LEGACY_SIGNING_SECRET,
          headers: { 'x-api-key': LEGACY_TOKEN },
        }),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return String(row.id);
  } finally {
    await store.close();
  }
}

const serverEnv = (dataDir: string, databaseUrl = '') => ({
  ROTSCOPE_DATA_DIR: dataDir,
  ROTSCOPE_ALLOW_PRIVATE_ADDRESSES: 'true',
  DATABASE_URL: databaseUrl,
});

async function stop(server: ChildServer): Promise<void> {
  server.process.kill('SIGTERM');
  expect(await server.exited).toBe(0);
}

let receiver: HttpReceiver;
const dirs: string[] = [];
beforeAll(async () => {
  receiver = await startHttpReceiver();
});
afterAll(async () => {
  await receiver?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('secrets at rest on the embedded database', { timeout: 600_000 }, () => {
  it('keeps every secret out of the data directory, seals legacy rows, and rotates', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-secrets-'));
    dirs.push(dataDir);
    let server = await startChildServer(serverEnv(dataDir));
    const webhookId = await createChannels(server, receiver);
    await expectSendWorks(server, receiver, webhookId, HEADER_TOKEN);
    await stop(server);

    // The key file: made on first use, owner-only.
    const keyFile = path.join(dataDir, 'secret.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const firstKey = readFileSync(keyFile, 'utf8');

    // A row from before sealing: serve seals it when it starts.
    const legacyId = await insertLegacyChannel({ dataDir }, `${receiver.url}/legacy`);
    server = await startChildServer(serverEnv(dataDir));
    await expectSendWorks(server, receiver, legacyId, LEGACY_TOKEN);
    expect(server.output()).toMatch(/plaintext by an older version are now sealed/);
    await stop(server);

    // Rotation with the real command: a new key seals everything, the old one leaves the file.
    const rotated = await runCli(['secrets', 'rotate'], {
      env: serverEnv(dataDir),
      timeoutMs: 300_000,
    });
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toMatch(/new key [0-9a-f]{16} .*re-sealed 4 channel/);
    expect(rotated.stdout).toMatch(/retired keys: [0-9a-f]{16}/);
    const secondKey = readFileSync(keyFile, 'utf8');
    expect(secondKey).not.toBe(firstKey);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const status = await runCli(['secrets', 'status'], {
      env: serverEnv(dataDir),
      timeoutMs: 300_000,
    });
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/channels in plaintext: 0/);
    expect(status.stdout).toMatch(/channels sealed with [0-9a-f]{16}: 4\n/);

    server = await startChildServer(serverEnv(dataDir));
    await expectSendWorks(server, receiver, webhookId, HEADER_TOKEN);
    await expectSendWorks(server, receiver, legacyId, LEGACY_TOKEN);
    await stop(server);

    // The scan finds what is stored in clear (the public channel name)...
    expect(filesHolding(dataDir, CHANNEL_NAME).length).toBeGreaterThan(0);
    // ...and none of the secrets sent to the API, in any file (tables, indexes, WAL).
    for (const value of [HEADER_TOKEN, SLACK_TOKEN, SMTP_PASSWORD, SIGNING_SECRET]) {
      expect({ value, files: filesHolding(dataDir, value) }).toEqual({ value, files: [] });
    }
    // The legacy plaintext is gone from the table files; only WAL written before the sealing
    // may still hold it until PGlite recycles those segments (docs/security.md).
    const legacyLeft = filesHolding(dataDir, LEGACY_TOKEN).map((f) => path.relative(dataDir, f));
    expect(legacyLeft.filter((file) => !file.startsWith('pg_wal'))).toEqual([]);
  });

  it('answers `secrets status` through the running server that holds the data directory', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-secrets-'));
    dirs.push(dataDir);
    const server = await startChildServer(serverEnv(dataDir));
    try {
      await createChannels(server, receiver);
      const status = await runCli(['secrets', 'status'], {
        env: serverEnv(dataDir),
        timeoutMs: 120_000,
      });
      expect(status.stderr).toBe('');
      expect(status.code).toBe(0);
      expect(status.stdout).toContain(`from the running server, pid ${server.process.pid}`);
      expect(status.stdout).toMatch(/keys here: [0-9a-f]{16} \(seals\)/);
      expect(status.stdout).toMatch(/channels sealed with [0-9a-f]{16}: 3\n/);
      // Writing still refuses beside it, naming the holder.
      const seal = await runCli(['secrets', 'seal'], {
        env: serverEnv(dataDir),
        timeoutMs: 120_000,
      });
      expect(seal.code).toBe(1);
      expect(seal.stderr).toContain(`pid ${server.process.pid}`);
    } finally {
      await stop(server);
    }
  });

  it('refuses a key file other users may read', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-secrets-'));
    dirs.push(dataDir);
    const made = await runCli(['secrets', 'status'], {
      env: serverEnv(dataDir),
      timeoutMs: 300_000,
    });
    expect(made.code).toBe(0);
    await run('chmod', ['644', path.join(dataDir, 'secret.key')]);
    const refused = await runCli(['secrets', 'status'], {
      env: serverEnv(dataDir),
      timeoutMs: 300_000,
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(
      /secret\.key may be read by other users \(mode 644\): chmod 600/,
    );
  });
});

describe.skipIf(!process.env.DATABASE_URL)(
  'secrets at rest on PostgreSQL',
  { timeout: 600_000 },
  () => {
    it('keeps every secret out of pg_dump, and rotates with ROTSCOPE_SECRET_KEY', async () => {
      const databaseUrl = (await createTestDatabase())!;
      const dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-secrets-'));
      dirs.push(dataDir);
      const oldKey = randomBytes(32).toString('base64');
      const newKey = randomBytes(32).toString('hex');
      const env = { ...serverEnv(dataDir, databaseUrl), ROTSCOPE_SECRET_KEY: oldKey };
      const legacyId = await insertLegacyChannel(
        { dataDir, databaseUrl },
        `${receiver.url}/legacy`,
      );
      let server = await startChildServer(env);
      const webhookId = await createChannels(server, receiver);
      await expectSendWorks(server, receiver, legacyId, LEGACY_TOKEN);
      await stop(server);

      const dump = async () =>
        (await run('pg_dump', [databaseUrl], { maxBuffer: 64 << 20 })).stdout;
      let text = await dump();
      expect(text).toContain(CHANNEL_NAME);
      for (const value of [HEADER_TOKEN, SLACK_TOKEN, SMTP_PASSWORD, SIGNING_SECRET, LEGACY_TOKEN])
        expect(text).not.toContain(value);

      // Rotation: the new key in ROTSCOPE_SECRET_KEY, the old one in _PREVIOUS.
      const rotated = await runCli(['secrets', 'rotate'], {
        env: { ...env, ROTSCOPE_SECRET_KEY: newKey, ROTSCOPE_SECRET_KEY_PREVIOUS: oldKey },
      });
      expect(rotated.stderr).toBe('');
      expect(rotated.code).toBe(0);
      expect(rotated.stdout).toMatch(/re-sealed 4 channel/);
      expect(rotated.stdout).toMatch(/nothing uses the previous keys now/);

      // With the new key alone, every channel still sends; with the old key alone, none.
      server = await startChildServer({ ...env, ROTSCOPE_SECRET_KEY: newKey });
      await expectSendWorks(server, receiver, webhookId, HEADER_TOKEN);
      await expectSendWorks(server, receiver, legacyId, LEGACY_TOKEN);
      await stop(server);
      server = await startChildServer(env);
      expect(server.output()).toMatch(/sealed with keys this server does not have/);
      const refused = await call(server, 'POST', `/api/channels/${webhookId}/test`);
      expect(refused.body).toMatchObject({ ok: false, status: 'retry' });
      await stop(server);

      text = await dump();
      for (const value of [HEADER_TOKEN, SLACK_TOKEN, SMTP_PASSWORD, SIGNING_SECRET, LEGACY_TOKEN])
        expect(text).not.toContain(value);
    });
  },
);
