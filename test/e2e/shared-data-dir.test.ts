/**
 * One embedded data directory, a running `rotscope serve` and the CLI (issue 14 item 5): PGlite
 * is single-process, so a command that finds the directory held never writes underneath the
 * server. `token create` and `import` go through the server (the token works now and after a
 * restart; the imported session is there at once); a second `serve` and `migrate` refuse naming
 * the server's pid; a lock left by a server killed with SIGKILL is taken over. Real child
 * processes throughout. The steps share one directory and run in order.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_FILE } from '../../src/store/data-dir-lock.ts';
import { startChildServer, type ChildServer } from '../helpers/child-server.ts';
import { runCli } from '../helpers/cli.ts';
import { jsonRequest, jsonSpan } from '../helpers/otlp-bodies.ts';
import { usingPostgres } from '../helpers/store.ts';

const TRANSCRIPT = fileURLToPath(
  new URL('../fixtures/real/claude-code_transcript_sidechains.jsonl', import.meta.url),
);
/** The imported transcript's conversation as the API lists it: 170 calls in 6 streams. */
const IMPORTED = { calls: 170, streams: 6 };

let dataDir: string;
let env: Record<string, string>;
let server: ChildServer | undefined;
let adminToken = '';
let ingestToken = '';

beforeAll(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-shared-dir-'));
  // no retention: a server would prune the imported 2025 session 10 s after it starts
  env = { ROTSCOPE_DATA_DIR: dataDir, ROTSCOPE_RETENTION_DAYS: '0' };
});
afterAll(async () => {
  if (server && server.process.exitCode === null && server.process.signalCode === null) {
    server.process.kill('SIGKILL');
    await server.exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

async function postSpans(url: string, token: string | undefined): Promise<number> {
  const response = await fetch(`${url}/v1/traces`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(jsonRequest([jsonSpan()])),
  });
  await response.arrayBuffer();
  return response.status;
}

async function conversations(
  url: string,
): Promise<Array<{ id: string; calls: number; streams: number }>> {
  const response = await fetch(`${url}/api/conversations?limit=500`, {
    headers: { authorization: `Bearer ${adminToken}` },
  });
  expect(response.status).toBe(200);
  return (
    (await response.json()) as { items: Array<{ id: string; calls: number; streams: number }> }
  ).items;
}

const lockHolder = () =>
  JSON.parse(readFileSync(path.join(dataDir, LOCK_FILE), 'utf8')) as { pid: number; url: string };

// The lock guards the embedded database only; on PostgreSQL processes share the database.
describe.skipIf(usingPostgres)(
  'one embedded data directory, a server and the CLI',
  {
    timeout: 600_000,
  },
  () => {
    it('the server holds the directory: its lock names its pid, port and URL', async () => {
      server = await startChildServer(env);
      const port = Number(new URL(server.url).port);
      expect(lockHolder()).toMatchObject({ pid: server.process.pid, port, url: server.url });
    });

    it('token create goes through the running server; the new token is accepted at once', async () => {
      const url = server!.url;
      const pid = server!.process.pid;
      // A first token that is not admin would lock the owner out (the README once listed the
      // ingest token first): refused with the reason, and the server stays open.
      const lockout = await runCli(
        ['token', 'create', '--workspace', 'default', '--scope', 'ingest'],
        { env },
      );
      expect(lockout.code).toBe(1);
      expect(lockout.stdout).toBe('');
      expect(lockout.stderr).toContain('answered 409');
      expect(lockout.stderr).toContain('workspace "default" has no admin token yet');
      expect(lockout.stderr).toContain('--scope admin');
      expect((await fetch(`${url}/api/conversations`)).status).toBe(200);

      // First token: the server is open on loopback, so the bootstrap needs no token.
      const admin = await runCli(
        ['token', 'create', '--workspace', 'default', '--scope', 'admin'],
        {
          env,
        },
      );
      expect(admin.code).toBe(0);
      adminToken = admin.stdout.trim();
      expect(adminToken).toMatch(/^rs_admin_/);
      expect(admin.stderr).toContain(`created by the running server (pid ${pid}, ${url})`);

      // Now tokens exist: without an admin token the server refuses, and the CLI says what to do.
      const refused = await runCli(
        ['token', 'create', '--workspace', 'default', '--scope', 'ingest'],
        { env },
      );
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`the running server (pid ${pid}, ${url}) answered 401`);
      expect(refused.stderr).toContain('--token (or ROTSCOPE_TOKEN)');

      const ingest = await runCli(
        ['token', 'create', '--workspace', 'default', '--scope', 'ingest'],
        { env: { ...env, ROTSCOPE_TOKEN: adminToken } },
      );
      expect(ingest.code).toBe(0);
      ingestToken = ingest.stdout.trim();
      expect(ingestToken).toMatch(/^rs_ingest_/);

      expect(await postSpans(url, 'rs_ingest_not-a-token-at-all-000000000')).toBe(401);
      expect(await postSpans(url, ingestToken)).toBe(200);
      // Locked down: a request without a token is refused (the open state is cached ≤ 2 s).
      await expect.poll(() => postSpans(url, undefined), { timeout: 10_000 }).toBe(401);

      // An admin token creates tokens for its own workspace only.
      const otherWorkspace = await runCli(
        ['token', 'create', '--workspace', 'other', '--scope', 'read', '--token', adminToken],
        { env },
      );
      expect(otherWorkspace.code).toBe(1);
      expect(otherWorkspace.stderr).toContain('answered 403');
    });

    it("a second serve and migrate refuse, naming the server's pid, and write nothing", async () => {
      const { url } = server!;
      const pid = server!.process.pid;
      const [second, migrated] = await Promise.all([
        runCli(['serve', '--port', '0'], { env }),
        runCli(['migrate'], { env }),
      ]);
      for (const result of [second, migrated]) {
        expect(result.code).toBe(1);
        expect(result.stderr).toContain(`is in use by rotscope (pid ${pid}, serving ${url}`);
        expect(result.stderr).not.toMatch(/\n\s+at /);
      }
      expect(await postSpans(url, ingestToken)).toBe(200); // the server is unharmed
    });

    it('import goes through the running server, with an ingest token; the session is there at once', async () => {
      const { url } = server!;
      const pid = server!.process.pid;
      expect(await conversations(url)).not.toContainEqual(expect.objectContaining(IMPORTED));
      const imported = await runCli(['import', TRANSCRIPT], {
        env: { ...env, ROTSCOPE_TOKEN: ingestToken },
      });
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stderr).toContain(`held by the running server (pid ${pid}, ${url})`);
      expect(imported.stdout).toContain('170 calls');
      expect(await conversations(url)).toContainEqual(expect.objectContaining(IMPORTED));
      expect(await postSpans(url, ingestToken)).toBe(200);
    });

    it('after a restart the token is still there; SIGTERM released the lock', async () => {
      server!.process.kill('SIGTERM');
      expect(await server!.exited).toBe(0);
      expect(existsSync(path.join(dataDir, LOCK_FILE))).toBe(false);
      server = await startChildServer(env);
      expect(await postSpans(server.url, ingestToken)).toBe(200);
      expect(await postSpans(server.url, undefined)).toBe(401);
    });

    it('a lock left by a server killed with SIGKILL is taken over, by import and by serve', async () => {
      const killedPid = server!.process.pid;
      server!.process.kill('SIGKILL');
      await server!.exited;
      expect(lockHolder().pid).toBe(killedPid); // left behind

      const imported = await runCli(['import', TRANSCRIPT], { env });
      expect(imported.stderr).toBe('');
      expect(imported.code).toBe(0);
      expect(imported.stdout).toContain('170 calls');
      expect(existsSync(path.join(dataDir, LOCK_FILE))).toBe(false);

      server = await startChildServer(env);
      expect(await conversations(server.url)).toContainEqual(expect.objectContaining(IMPORTED));
      const killedAgain = server.process.pid;
      server.process.kill('SIGKILL');
      await server.exited;
      expect(lockHolder().pid).toBe(killedAgain);
      server = await startChildServer(env);
      expect(lockHolder().pid).toBe(server.process.pid);
      expect(await postSpans(server.url, ingestToken)).toBe(200);
      server.process.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    });
  },
);
