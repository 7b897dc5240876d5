/**
 * CLI commands beside a running server. The embedded database (PGlite) allows one process per
 * data directory, so a command that finds the directory held never writes underneath the
 * holder: it goes through the holder's HTTP API (`token create|list|revoke`), or refuses naming the
 * holder's pid and address (`migrate`, `import`). On PostgreSQL there is no lock.
 */
import path from 'node:path';
import type { Config } from '../config.ts';
import { DataDirLockedError, describeHolder } from '../store/data-dir-lock.ts';
import { openStore, type Store } from '../store/db.ts';
import type { Scope } from '../model/tokens.ts';
import { reachable, runningServers, type ServerRecord } from './server-record.ts';
import { holdsDatabase, type DataDirChoice } from './store-location.ts';

/**
 * A running server found through its record (./server-record.ts) while the store this command
 * would use does not exist yet: going on would create a second store beside the server's, one
 * the console never shows. Commands that can go through the server do (`import`, `token`, as
 * beside a holder of their own data directory); the others refuse, creating nothing.
 */
export class ServerElsewhereError extends DataDirLockedError {
  constructor(
    /** The data directory this command would have created. */
    readonly wouldCreate: string,
    readonly server: ServerRecord,
  ) {
    super(server.dataDir ?? 'PostgreSQL (DATABASE_URL)', {
      pid: server.pid,
      port: Number(new URL(server.url).port) || null,
      url: server.url,
      startedAt: server.startedAt,
    });
  }
}

/**
 * The server to use instead of creating a new embedded store: only when the data directory was
 * not chosen (no --data-dir, ROTSCOPE_DATA_DIR or DATABASE_URL), holds no database yet, and a
 * server runs on another store. Undefined otherwise (the command opens its own store).
 */
export async function findServerElsewhere(
  choice: DataDirChoice,
  config: Config,
  env: Record<string, string | undefined>,
): Promise<ServerElsewhereError | undefined> {
  if (choice.source === 'chosen' || config.databaseUrl !== undefined) return undefined;
  if (holdsDatabase(choice.dataDir)) return undefined;
  const mine = path.resolve(choice.dataDir);
  const other = (await runningServers(env)).find((server) => server.dataDir !== mine);
  return other === undefined ? undefined : new ServerElsewhereError(mine, other);
}

interface Out {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/**
 * Opens the store, or reports who holds the embedded data directory (or, with `elsewhere`, the
 * server to use instead of creating a store: findServerElsewhere).
 */
export async function openStoreOrHolder(
  config: Config,
  elsewhere?: ServerElsewhereError,
): Promise<{ store: Store; locked?: never } | { store?: never; locked: DataDirLockedError }> {
  if (elsewhere !== undefined) return { locked: elsewhere };
  try {
    return { store: await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }) };
  } catch (error) {
    if (error instanceof DataDirLockedError) return { locked: error };
    throw error;
  }
}

/** Prints why `command` does not run beside the holder; returns the exit code (1). */
export function refuseHeld(command: string, locked: DataDirLockedError, io: Out): number {
  if (locked instanceof ServerElsewhereError) {
    const { server, wouldCreate } = locked;
    const store = server.dataDir
      ? `its data directory ${server.dataDir}`
      : 'PostgreSQL (its DATABASE_URL)';
    const rerun = server.dataDir
      ? `ROTSCOPE_DATA_DIR=${server.dataDir} rotscope ${command}`
      : `DATABASE_URL=... rotscope ${command}`;
    io.stderr(
      `rotscope ${command}: a rotscope server is running at ${reachable(server.url)} (pid ${server.pid}, ` +
        `${store}), and there is no store at ${wouldCreate}: ${command} would create a second one ` +
        `that server never sees, so nothing was done. To act on the server's store, stop it and run ` +
        `${rerun}; to use another store, set ROTSCOPE_DATA_DIR (or --data-dir) or DATABASE_URL\n`,
    );
    return 1;
  }
  const pid = locked.holder ? ` (pid ${locked.holder.pid})` : '';
  io.stderr(
    `rotscope ${command}: the data directory ${locked.dataDir} is in use by ${describeHolder(locked.holder)}. ` +
      `${command} would write to the embedded database underneath it and lose data: stop that process${pid} ` +
      'first, or use DATABASE_URL to share a PostgreSQL\n',
  );
  return 1;
}

/** The holder's base URL, reachable from this machine (an unspecified bind address becomes loopback). */
export const reachableUrl = reachable;

/**
 * `token create` through the server holding the data directory: `POST /api/tokens`, open on
 * loopback before the first token, else with an admin token (`--token` or ROTSCOPE_TOKEN).
 */
export async function createTokenThroughServer(
  locked: DataDirLockedError,
  request: { workspace: string; scope: Scope; name?: string; adminToken: string | undefined },
  io: Out,
): Promise<number> {
  const holder = locked.holder;
  if (!holder?.url) return refuseHeld('token create', locked, io);
  const base = reachableUrl(holder.url);
  let response: Response;
  try {
    response = await fetch(`${base}/api/tokens`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(request.adminToken ? { authorization: `Bearer ${request.adminToken}` } : {}),
      },
      body: JSON.stringify({
        workspace: request.workspace,
        scope: request.scope,
        ...(request.name ? { name: request.name } : {}),
      }),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    const reason = (error as { cause?: { code?: string } }).cause?.code ?? String(error);
    io.stderr(
      `rotscope token create: the data directory ${locked.dataDir} is held by pid ${holder.pid}, ` +
        `but its server at ${base} does not answer (${reason})\n`,
    );
    return 1;
  }
  const body = (await response.json().catch(() => ({}))) as { token?: string; message?: string };
  if (response.status === 201 && typeof body.token === 'string') {
    io.stdout(`${body.token}\n`);
    io.stderr(
      `token for workspace "${request.workspace}" with scope "${request.scope}", created by the running ` +
        `server (pid ${holder.pid}, ${base}): shown once, store it now\n`,
    );
    return 0;
  }
  const hint =
    response.status === 401 || response.status === 403
      ? `; pass an admin token of workspace "${request.workspace}" with --token (or ROTSCOPE_TOKEN), or stop the server (pid ${holder.pid}) and run this again`
      : '';
  io.stderr(
    `rotscope token create: the running server (pid ${holder.pid}, ${base}) answered ${response.status}: ` +
      `${body.message ?? 'no message'}${hint}\n`,
  );
  return 1;
}

/**
 * A JSON API call to the server holding the data directory (`token list`, `token revoke`),
 * with an admin token when given. Returns the answer's body on a 2xx; otherwise prints why
 * (naming the holder) and returns undefined.
 */
export async function callServer(
  locked: DataDirLockedError,
  command: string,
  request: { method: 'GET' | 'POST'; path: string; adminToken: string | undefined },
  io: Out,
): Promise<unknown> {
  const holder = locked.holder;
  if (!holder?.url) {
    refuseHeld(command, locked, io);
    return undefined;
  }
  const base = reachableUrl(holder.url);
  let response: Response;
  try {
    response = await fetch(`${base}${request.path}`, {
      method: request.method,
      headers: request.adminToken ? { authorization: `Bearer ${request.adminToken}` } : {},
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    const reason = (error as { cause?: { code?: string } }).cause?.code ?? String(error);
    io.stderr(
      `rotscope ${command}: the data directory ${locked.dataDir} is held by pid ${holder.pid}, ` +
        `but its server at ${base} does not answer (${reason})\n`,
    );
    return undefined;
  }
  const body = (await response.json().catch(() => ({}))) as { message?: string };
  if (response.ok) return body;
  const hint =
    response.status === 401 || response.status === 403
      ? `; pass an admin token with --token (or ROTSCOPE_TOKEN), or stop the server (pid ${holder.pid}) and run this again`
      : '';
  io.stderr(
    `rotscope ${command}: the running server (pid ${holder.pid}, ${base}) answered ${response.status}: ` +
      `${body.message ?? 'no message'}${hint}\n`,
  );
  return undefined;
}
