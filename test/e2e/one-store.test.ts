/**
 * One store, found from anywhere (issue 36 §1), as a user meets it: `rotscope serve` started in
 * one folder, commands run from another, all the real bin/rotscope.js in child processes with
 * HOME a temporary folder. The server records itself (URL, pid, store; no secret) in
 * `$HOME/.local/state/rotscope/servers/<pid>.json`, private, removed at a clean stop. From
 * another folder, `import` lands in the server's store (never a second store nobody sees);
 * `migrate`, whose store does not exist yet, stops with exit 1 naming the server's URL and
 * creates nothing; `ROTSCOPE_DATA_DIR` and `analyze FILE` use their own store; an earlier
 * version's `./.rotscope` keeps working and is named; stale records (a dead pid, an address that
 * does not answer) are ignored and removed. On PostgreSQL (DATABASE_URL for the server only) the
 * command finds the server through its record alone.
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../helpers/child-server.ts';
import { runCli } from '../helpers/cli.ts';
import { seedDataDir } from '../helpers/data-dir.ts';
import { createTestDatabase } from '../helpers/store.ts';

const TRANSCRIPT = fileURLToPath(
  new URL('../fixtures/real/claude-code_transcript_sidechains.jsonl', import.meta.url),
);
const SESSION = 'fe5e1c67-53e7-4862-81ae-d0e013e3270b';

const root = mkdtempSync(path.join(tmpdir(), 'rotscope-e2e-one-store-'));
const home = path.join(root, 'home');
/** Where the user started the server (a checkout, say), and where they run commands later. */
const started = path.join(root, 'checkout');
const elsewhere = path.join(root, 'elsewhere');
const userStore = path.join(home, '.local', 'share', 'rotscope');
const records = path.join(home, '.local', 'state', 'rotscope', 'servers');

/** The user's environment: HOME, nothing chosen (no data dir, no database, no XDG folders). */
const user = {
  HOME: home,
  XDG_DATA_HOME: '',
  XDG_STATE_HOME: '',
  ROTSCOPE_DATA_DIR: '',
  ROTSCOPE_TOKEN: '',
  ROTSCOPE_RETENTION_DAYS: '0',
};

let server: ChildServer;
let databaseUrl: string | undefined;

beforeAll(async () => {
  for (const dir of [home, started, elsewhere]) mkdirSync(dir, { recursive: true });
  databaseUrl = await createTestDatabase();
  // the embedded store starts from the migrated template, where the server will look for it
  if (!databaseUrl) seedDataDir({ ROTSCOPE_DATA_DIR: userStore });
  server = await startChildServer(
    {
      ...user,
      ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    },
    { cwd: started },
  );
});

afterAll(async () => {
  if (server && server.process.exitCode === null) {
    server.process.kill('SIGTERM');
    await server.exited;
  }
  rmSync(root, { recursive: true, force: true });
});

function cli(args: string[], env: Record<string, string> = {}, cwd = elsewhere) {
  return runCli(args, { cwd, env: { ...user, ...env }, timeoutMs: 60_000 });
}

describe('one store, found from anywhere', { timeout: 180_000 }, () => {
  it('serve records itself privately, with no secret in the record', async () => {
    const file = path.join(records, `${server.process.pid}.json`);
    // written right after the "listening" line the helper waits for
    for (let i = 0; i < 100 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 50));
    expect((statSync(records).mode & 0o777).toString(8)).toBe('700');
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
    const record = JSON.parse(readFileSync(file, 'utf8'));
    expect(record).toMatchObject({ pid: server.process.pid, url: server.url });
    expect(record.dataDir).toBe(databaseUrl ? null : userStore);
    expect(readFileSync(file, 'utf8')).not.toContain('postgres://');
    // the embedded store is the per-user one, not ./.rotscope of the folder it started in
    expect(existsSync(path.join(started, '.rotscope'))).toBe(false);
  });

  it('import from another folder lands in the running server’s store', async () => {
    const r = await cli(['import', TRANSCRIPT]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/importing through (the running server|it)/);
    expect(r.stderr).toContain(server.url);
    const response = await fetch(`${server.url}/api/conversations?limit=50`);
    const { items } = (await response.json()) as { items: Array<{ id: string }> };
    expect(items.map((c) => c.id).some((id) => id.includes(SESSION))).toBe(true);
    // no second store: not in this folder, and (on PostgreSQL) not in the per-user place either
    expect(existsSync(path.join(elsewhere, '.rotscope'))).toBe(false);
    // (the server on PostgreSQL keeps only its secret.key there)
    if (databaseUrl) expect(existsSync(path.join(userStore, 'PG_VERSION'))).toBe(false);
  });

  it('token list from another folder, with no store of its own, is answered by the server', async () => {
    const fresh = path.join(root, 'token-data');
    const r = await cli(['token', 'list'], { XDG_DATA_HOME: fresh });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('no tokens');
    expect(existsSync(fresh)).toBe(false);
  });

  it('a command that would create a new store stops, naming the server, and creates nothing', async () => {
    const fresh = path.join(root, 'fresh-data');
    const r = await cli(['migrate'], { XDG_DATA_HOME: fresh });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`a rotscope server is running at ${server.url}`);
    expect(r.stderr).toContain('nothing was done');
    expect(existsSync(fresh)).toBe(false);
    const secrets = await cli(['secrets', 'seal'], { XDG_DATA_HOME: fresh });
    expect(secrets.code).toBe(1);
    expect(secrets.stderr).toContain(server.url);
    expect(existsSync(fresh)).toBe(false);
  });

  it('ROTSCOPE_DATA_DIR and analyze FILE use their own store', async () => {
    const own = path.join(root, 'own-store');
    const r = await cli(['migrate'], { ROTSCOPE_DATA_DIR: own });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/applied|up to date/);
    expect(readdirSync(own)).toContain('PG_VERSION');

    const fresh = path.join(root, 'analyze-data');
    const analyzed = await cli(['analyze', TRANSCRIPT, '--json'], { XDG_DATA_HOME: fresh });
    expect(analyzed.code, analyzed.stderr).toBe(0);
    expect(JSON.parse(analyzed.stdout)).toBeTypeOf('object');
    expect(existsSync(fresh)).toBe(false);
  });

  it('an earlier version’s ./.rotscope keeps working and is named', async () => {
    const project = path.join(root, 'old-project');
    mkdirSync(project);
    const made = await cli(['migrate'], { ROTSCOPE_DATA_DIR: path.join(project, '.rotscope') });
    expect(made.code, made.stderr).toBe(0);
    const fresh = path.join(root, 'legacy-data');
    const r = await cli(['migrate'], { XDG_DATA_HOME: fresh }, project);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('up to date');
    expect(r.stderr).toContain(
      `using the data directory ${path.join(project, '.rotscope')} of an earlier rotscope version`,
    );
    expect(existsSync(fresh)).toBe(false);
  });

  it('a clean stop removes the record; stale records are ignored and removed', async () => {
    server.process.kill('SIGTERM');
    await server.exited;
    expect(existsSync(path.join(records, `${server.process.pid}.json`))).toBe(false);

    // a server killed outright (its pid gone) and one whose address does not answer
    const dead = spawnSync(process.execPath, ['-e', 'process.pid']).pid!;
    const stale = [
      { pid: dead, url: 'http://127.0.0.1:9', dataDir: '/elsewhere', startedAt: 'x' },
      { pid: process.pid, url: 'http://127.0.0.1:9', dataDir: '/elsewhere', startedAt: 'y' },
    ];
    for (const record of stale)
      writeFileSync(path.join(records, `${record.pid}.json`), JSON.stringify(record), {
        mode: 0o600,
      });
    const fresh = path.join(root, 'after-stop');
    const r = await cli(['migrate'], { XDG_DATA_HOME: fresh });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(path.join(fresh, 'rotscope'))).toContain('PG_VERSION');
    expect(readdirSync(records)).toEqual([]);
  });
});
