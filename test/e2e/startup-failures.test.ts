/**
 * `rotscope serve` starts or says why not (the real bin/rotscope.js in a child process): a port
 * in use, a data directory that cannot be written, a DATABASE_URL that does not answer and a
 * schema newer than the code each exit 1 at once with one line naming the cause and the fix,
 * and leave the data directory's lock free. A second serve on a port in use once ran its
 * migrations, printed `listen EADDRINUSE` and kept running, holding the lock.
 */
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { runCli } from '../helpers/cli.ts';

const tmp = mkdtempSync(join(tmpdir(), 'rotscope-startup-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function listenOnFreePort(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen({ host: '127.0.0.1', port: 0 }, () => resolve(server));
  });
}
const portOf = (server: Server) => (server.address() as { port: number }).port;

/** One line on stderr, nothing on stdout, exit 1 (not killed by the timeout). */
function expectOneLineFailure(r: { code: number | string; stdout: string; stderr: string }) {
  expect(r.code, r.stderr).toBe(1);
  expect(r.stdout).toBe('');
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(/^rotscope serve: /);
}

describe.skipIf(!!process.env.DATABASE_URL)('rotscope serve: start-up failures', () => {
  it('a port in use: names the port and the process holding it, takes nothing', async () => {
    const holder = await listenOnFreePort();
    const port = portOf(holder);
    const dataDir = join(tmp, 'port');
    try {
      const r = await runCli(['serve', '--port', String(port), '--data-dir', dataDir], {
        timeoutMs: 60_000,
      });
      expectOneLineFailure(r);
      expect(r.stderr).toContain(`port ${port} on 127.0.0.1 is in use (by pid ${process.pid}`);
      expect(r.stderr).toContain('--port (ROTSCOPE_PORT)');
      // checked before the store: no migration ran, no lock was taken
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      holder.close();
    }
  }, 90_000);

  it('a data directory that cannot be created or written', async () => {
    const file = join(tmp, 'a-file');
    writeFileSync(file, 'not a directory');
    const r = await runCli(['serve', '--port', '0', '--data-dir', join(file, 'data')], {
      timeoutMs: 60_000,
    });
    expectOneLineFailure(r);
    expect(r.stderr).toContain(`the data directory ${join(file, 'data')} is not writable (ENOTDIR`);
    expect(r.stderr).toContain('--data-dir (ROTSCOPE_DATA_DIR)');
  }, 90_000);

  it('a DATABASE_URL that does not answer', async () => {
    const closed = await listenOnFreePort();
    const port = portOf(closed);
    await new Promise((r) => closed.close(r));
    const r = await runCli(['serve', '--port', '0'], {
      env: { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres` },
      timeoutMs: 60_000,
    });
    expectOneLineFailure(r);
    expect(r.stderr).toContain(`the database at 127.0.0.1:${port}/postgres does not answer`);
    expect(r.stderr).toContain('unset DATABASE_URL to use the embedded database');
  }, 90_000);

  it('a schema newer than the code: refused, and the lock is released', async () => {
    const dataDir = join(tmp, 'newer');
    const store = await openStore({ dataDir });
    try {
      const { current } = await migrate(store.db);
      await store.db
        .insertInto('schema_migrations')
        .values({ version: current + 1000, name: `${current + 1000}_from_the_future` })
        .execute();
    } finally {
      await store.close();
    }
    const r = await runCli(['serve', '--port', '0', '--data-dir', dataDir], { timeoutMs: 60_000 });
    expectOneLineFailure(r);
    expect(r.stderr).toMatch(/the database's schema is at version \d+, newer than this rotscope/);
    // the failed serve released the data directory: it opens again at once
    const again = await openStore({ dataDir });
    await again.close();
  }, 180_000);
});
