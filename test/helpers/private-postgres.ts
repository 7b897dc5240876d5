/**
 * A PostgreSQL server of the test's own, in a temporary directory on a free loopback port, so a
 * test can restart or stop it without touching the machine's shared cluster (other test files
 * use that one in parallel).
 *
 * Why `initdb` + `pg_ctl` and not `pg_createcluster`: everything lives in one temporary
 * directory (no entries in /etc/postgresql, nothing `pg_lsclusters` shows to other helpers),
 * and cleaning up is "stop, remove the directory". The server listens on 127.0.0.1 only, with
 * its Unix socket in that directory, trust authentication and fsync off (a test server).
 *
 * PostgreSQL refuses to run as root: as root the binaries run as the `postgres` OS user
 * (`runuser -u postgres --`), which owns the directory.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Runs a program; resolves with its stdout, rejects with its stderr on failure. */
function run(file: string, args: string[], options: { cwd?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, options, (error, stdout, stderr) => {
      if (error)
        reject(new Error(`${file} ${args.join(' ')} failed: ${String(stderr) || error.message}`));
      else resolve(String(stdout));
    });
  });
}

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  url: string;
  port: number;
  /** `pg_ctl restart -m fast`: sessions are terminated (57P01), the server is back when this resolves. */
  restart(): Promise<void>;
  /** `pg_ctl stop -m fast`: the server is down (connections refused) until `start()`. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server (fast) and removes its directory. Safe to call twice. */
  close(): Promise<void>;
}

/** The directory of initdb/pg_ctl/postgres: `ROTSCOPE_TEST_PG_BIN`, else the newest /usr/lib/postgresql/N/bin. */
export function findPostgresBin(): string | undefined {
  const fromEnv = process.env.ROTSCOPE_TEST_PG_BIN;
  if (fromEnv) return existsSync(path.join(fromEnv, 'pg_ctl')) ? fromEnv : undefined;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = path.join(root, version, 'bin');
    if (existsSync(path.join(bin, 'initdb')) && existsSync(path.join(bin, 'pg_ctl'))) return bin;
  }
  return undefined;
}

/** Why a private server cannot be started here, or undefined when it can. */
export function privatePostgresUnavailable(): string | undefined {
  if (!findPostgresBin())
    return 'PostgreSQL server binaries (initdb, pg_ctl) not found; set ROTSCOPE_TEST_PG_BIN';
  if (process.getuid?.() === 0 && !existsSync('/usr/sbin/runuser') && !existsSync('/sbin/runuser'))
    return 'running as root without runuser: cannot start PostgreSQL as the postgres user';
  return undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Initializes and starts a private server. Call `close()` when done. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = findPostgresBin();
  if (!bin) throw new Error(privatePostgresUnavailable());
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(path.join(tmpdir(), 'rotscope-pg-'));
  const dataDir = path.join(dir, 'data');
  const pgTool = (tool: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args], { cwd: dir })
      : run(path.join(bin, tool), args, { cwd: dir });

  let port = 0;
  const serverOptions = () =>
    [
      `-p ${port}`,
      `-k ${dir}`,
      '-c listen_addresses=127.0.0.1',
      '-c fsync=off',
      '-c full_page_writes=off',
      '-c max_connections=60',
    ].join(' ');
  const pgCtl = (action: string, ...extra: string[]) =>
    pgTool('pg_ctl', [
      action,
      '-D',
      dataDir,
      '-w',
      '-t',
      '30',
      '-o',
      serverOptions(),
      '-l',
      path.join(dir, 'server.log'),
      ...extra,
    ]);

  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    try {
      await pgTool('pg_ctl', ['stop', '-D', dataDir, '-m', 'immediate', '-w', '-t', '30']);
    } catch {
      // not running (never started, or already stopped)
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (asRoot) {
      const uid = await run('id', ['-u', 'postgres']);
      const gid = await run('id', ['-g', 'postgres']);
      chownSync(dir, Number(uid.trim()), Number(gid.trim()));
    }
    port = await freePort();
    await pgTool('initdb', [
      '-D',
      dataDir,
      '-U',
      'postgres',
      '-A',
      'trust',
      '--no-sync',
      '-E',
      'UTF8',
    ]);
    await pgCtl('start');
  } catch (error) {
    await close();
    throw error;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async restart() {
      await pgCtl('restart', '-m', 'fast');
    },
    async stop() {
      await pgTool('pg_ctl', ['stop', '-D', dataDir, '-m', 'fast', '-w', '-t', '30']);
    },
    async start() {
      await pgCtl('start');
    },
    close,
  };
}
