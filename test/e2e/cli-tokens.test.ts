/**
 * `rotscope token create --name | list | revoke` as the real program (bin/rotscope.js in a
 * child process): on the store directly (PGlite data directory, or PostgreSQL with
 * DATABASE_URL), and beside a running server that holds the embedded data directory, through
 * that server's API.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../helpers/child-server.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, usingPostgres } from '../helpers/store.ts';

interface Listed {
  id: string;
  name: string;
  workspace: string;
  scope: string;
  prefix: string;
  revokedAt: string | null;
}

const list = async (args: string[], env: Record<string, string>): Promise<Listed[]> => {
  const result = await runCli(['token', 'list', '--json', ...args], { env });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Listed[];
};

// Each command opens the store anew (PGlite takes seconds on a loaded machine).
describe('token list and revoke on the store', { timeout: 600_000 }, () => {
  let dataDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-cli-tokens-'));
    const url = await createTestDatabase();
    env = url ? { DATABASE_URL: url } : { ROTSCOPE_DATA_DIR: dataDir };
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('lists tokens by name, workspace and scope (never the token), revokes one, and refuses bad usage', async () => {
    // a workspace's first token is its admin token
    for (const workspace of ['team-x', 'team-y']) {
      const admin = await runCli(
        ['token', 'create', '--workspace', workspace, '--scope', 'admin'],
        { env },
      );
      expect(admin.code, admin.stderr).toBe(0);
    }
    const created = await runCli(
      ['token', 'create', '--workspace', 'team-x', '--scope', 'ingest', '--name', 'ci ingest'],
      { env },
    );
    expect(created.code).toBe(0);
    const token = created.stdout.trim();
    const other = await runCli(['token', 'create', '--workspace', 'team-y', '--scope', 'read'], {
      env,
    });
    expect(other.code).toBe(0);

    const table = await runCli(['token', 'list'], { env });
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+WORKSPACE\s+SCOPE\s+PREFIX/);
    expect(table.stdout).toMatch(/ci ingest\s+team-x\s+ingest\s+rs_ingest_/);
    expect(table.stdout).not.toContain(token);

    const all = await list([], env);
    expect(all.map((t) => [t.name, t.workspace, t.scope])).toEqual([
      ['', 'team-y', 'read'],
      ['ci ingest', 'team-x', 'ingest'],
      ['', 'team-y', 'admin'],
      ['', 'team-x', 'admin'],
    ]);
    expect(await list(['--workspace', 'team-x'], env)).toHaveLength(2);

    const mine = all.find((t) => t.name === 'ci ingest')!;
    expect(mine.prefix).toBe(token.slice(0, 12));
    const revoked = await runCli(['token', 'revoke', mine.id], { env });
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`revoked token ${mine.id} ("ci ingest", workspace "team-x"`);
    expect((await list([], env)).map((t) => t.id)).not.toContain(mine.id);
    const withRevoked = await list(['--all'], env);
    expect(withRevoked.find((t) => t.id === mine.id)?.revokedAt).toEqual(expect.any(String));

    const missing = await runCli(['token', 'revoke', '999999'], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no token "999999"');
    for (const args of [
      ['token', 'revoke'],
      ['token', 'revoke', 'abc'],
      ['token', 'list', 'extra'],
      ['token', 'list', '--workspace', 'Not Valid'],
    ]) {
      const bad = await runCli(args, { env });
      expect({ args, code: bad.code }).toEqual({ args, code: 2 });
      expect(bad.stderr).toContain('usage: rotscope token create');
      expect(bad.stderr).toContain('rotscope token revoke ID');
    }
  });
});

// The lock guards the embedded database only; on PostgreSQL the commands use the database.
describe.skipIf(usingPostgres)(
  'token list and revoke beside a running server',
  { timeout: 600_000 },
  () => {
    let dataDir: string;
    let env: Record<string, string>;
    let server: ChildServer;

    beforeAll(async () => {
      dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-cli-tokens-held-'));
      env = { ROTSCOPE_DATA_DIR: dataDir };
      server = await startChildServer(env);
    }, 180_000);
    afterAll(async () => {
      server?.process.kill('SIGTERM');
      await server?.exited;
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('goes through the server: lists with an admin token, revokes, and the revoked token is refused at once', async () => {
      const pid = server.process.pid;
      const admin = await runCli(
        ['token', 'create', '--workspace', 'default', '--scope', 'admin', '--name', 'ops'],
        { env },
      );
      expect(admin.code).toBe(0);
      const adminToken = admin.stdout.trim();
      const ingest = await runCli(
        ['token', 'create', '--workspace', 'default', '--scope', 'ingest', '--name', 'agent'],
        { env: { ...env, ROTSCOPE_TOKEN: adminToken } },
      );
      expect(ingest.code).toBe(0);
      const ingestToken = ingest.stdout.trim();

      const refused = await runCli(['token', 'list'], { env });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        `the running server (pid ${pid}, ${server.url}) answered 401`,
      );
      expect(refused.stderr).toContain('--token (or ROTSCOPE_TOKEN)');

      const listed = await list(['--token', adminToken], env);
      expect(listed.map((t) => [t.name, t.scope])).toEqual([
        ['agent', 'ingest'],
        ['ops', 'admin'],
      ]);
      const agent = listed[0]!;
      const revoked = await runCli(['token', 'revoke', agent.id, '--token', adminToken], { env });
      expect(revoked.code).toBe(0);
      expect(revoked.stdout).toContain(`revoked token ${agent.id} ("agent"`);
      const post = await fetch(`${server.url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ingestToken}` },
        body: JSON.stringify({ resourceSpans: [] }),
      });
      expect(post.status).toBe(401);
      expect((await list(['--token', adminToken], env)).map((t) => t.name)).toEqual(['ops']);
    });
  },
);
