/**
 * `rotscope token create|list|revoke`. On a store this process can open (PostgreSQL, or an
 * embedded data directory nobody holds) it works on the database; beside a running server
 * that holds the embedded data directory it goes through that server's API (`POST
 * /api/tokens`, `GET /api/tokens`, `POST /api/tokens/:id/revoke`), open on loopback before
 * the first token, else with an admin token (`--token` or ROTSCOPE_TOKEN).
 */
import type { Config } from '../config.ts';
import type { DataDirLockedError } from '../store/data-dir-lock.ts';
import type { TokenInfo } from '../store/workspaces.ts';
import type { ServerElsewhereError } from './held-data-dir.ts';

interface Out {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export const TOKEN_USAGE = `usage: rotscope token create --workspace W --scope ingest|read|admin [--name NAME] [--token ADMIN]
       rotscope token list [--workspace W] [--all] [--json] [--token ADMIN]
       rotscope token revoke ID [--token ADMIN]
(W: lowercase letters, digits, - and _; --all also lists revoked tokens)
`;

export interface TokenArgs {
  config: Config;
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  /** A running server to go through instead of creating a store (held-data-dir.ts). */
  elsewhere?: ServerElsewhereError | undefined;
}

function adminTokenOf(
  values: TokenArgs['values'],
  env: Record<string, string | undefined>,
): string | undefined {
  const token = values.token ?? env.ROTSCOPE_TOKEN;
  return typeof token === 'string' && token !== '' ? token : undefined;
}

/** Runs `token <sub>`; returns the exit code. */
export async function tokenCommand(
  sub: string | undefined,
  args: TokenArgs,
  io: Out,
  env: Record<string, string | undefined>,
): Promise<number> {
  const { WORKSPACE_ID_PATTERN } = await import('../store/workspaces.ts');
  const { SCOPES, firstTokenRefusal } = await import('../model/tokens.ts');
  const workspaceValue = args.values.workspace;
  const workspaceOk =
    workspaceValue === undefined ||
    (typeof workspaceValue === 'string' && new RegExp(WORKSPACE_ID_PATTERN).test(workspaceValue));
  const usage = () => {
    io.stderr(TOKEN_USAGE);
    return 2;
  };
  if (sub === 'create') {
    const scope = SCOPES.find((known) => known === args.values.scope);
    const name = typeof args.values.name === 'string' ? args.values.name.trim() : '';
    if (typeof workspaceValue !== 'string' || !workspaceOk || scope === undefined) return usage();
    if (args.positionals.length > 0 || args.values.all || args.values.json) return usage();
    return withStoreOrServer(args.config, args.elsewhere, io, {
      direct: async (db) => {
        const { createToken, hasActiveAdmin } = await import('../store/workspaces.ts');
        const refusal = firstTokenRefusal(
          workspaceValue,
          scope,
          await hasActiveAdmin(db, workspaceValue),
        );
        if (refusal !== null) {
          io.stderr(`rotscope token create: ${refusal}\n`);
          return 1;
        }
        const { token } = await createToken(db, workspaceValue, scope, undefined, name);
        io.stdout(`${token}\n`);
        io.stderr(
          `token for workspace "${workspaceValue}" with scope "${scope}": shown once, store it now\n`,
        );
        return 0;
      },
      held: async (locked) => {
        const { createTokenThroughServer } = await import('./held-data-dir.ts');
        return createTokenThroughServer(
          locked,
          { workspace: workspaceValue, scope, name, adminToken: adminTokenOf(args.values, env) },
          io,
        );
      },
    });
  }
  if (sub === 'list') {
    if (!workspaceOk || args.positionals.length > 0 || args.values.scope || args.values.name)
      return usage();
    const workspace = workspaceValue as string | undefined;
    const includeRevoked = args.values.all === true;
    const print = (tokens: TokenInfo[]) => {
      io.stdout(args.values.json ? `${JSON.stringify(tokens, null, 2)}\n` : tokenTable(tokens));
      return 0;
    };
    return withStoreOrServer(args.config, args.elsewhere, io, {
      direct: async (db) => {
        const { listTokens } = await import('../store/workspaces.ts');
        return print(await listTokens(db, workspace, { includeRevoked }));
      },
      held: async (locked) => {
        const { callServer } = await import('./held-data-dir.ts');
        const query = new URLSearchParams();
        if (workspace !== undefined) query.set('workspace', workspace);
        if (includeRevoked) query.set('includeRevoked', 'true');
        const answer = await callServer(
          locked,
          'token list',
          {
            method: 'GET',
            path: `/api/tokens?${query}`,
            adminToken: adminTokenOf(args.values, env),
          },
          io,
        );
        if (answer === undefined) return 1;
        return print((answer as { items: TokenInfo[] }).items);
      },
    });
  }
  if (sub === 'revoke') {
    const [id, ...more] = args.positionals;
    if (id === undefined || more.length > 0 || !/^[1-9][0-9]{0,17}$/.test(id)) return usage();
    if (workspaceValue !== undefined || args.values.scope || args.values.all || args.values.json)
      return usage();
    const report = (revoked: TokenInfo | undefined) => {
      if (!revoked) {
        io.stderr(`rotscope token revoke: no token "${id}"\n`);
        return 1;
      }
      io.stdout(`revoked token ${revoked.id} (${describeToken(revoked)})\n`);
      return 0;
    };
    return withStoreOrServer(args.config, args.elsewhere, io, {
      direct: async (db) => {
        const { revokeToken } = await import('../store/workspaces.ts');
        return report(await revokeToken(db, undefined, id));
      },
      held: async (locked) => {
        const { callServer } = await import('./held-data-dir.ts');
        const answer = await callServer(
          locked,
          'token revoke',
          {
            method: 'POST',
            path: `/api/tokens/${id}/revoke`,
            adminToken: adminTokenOf(args.values, env),
          },
          io,
        );
        return answer === undefined ? 1 : report(answer as TokenInfo);
      },
    });
  }
  return usage();
}

/** Opens the store and runs `direct`, or, when a server holds the data directory, `held`. */
async function withStoreOrServer(
  config: Config,
  elsewhere: ServerElsewhereError | undefined,
  io: Out,
  run: {
    direct: (db: import('../store/db.ts').Db) => Promise<number>;
    held: (locked: DataDirLockedError) => Promise<number>;
  },
): Promise<number> {
  const { openStoreOrHolder } = await import('./held-data-dir.ts');
  const { migrate } = await import('../store/migrate.ts');
  const { store, locked } = await openStoreOrHolder(config, elsewhere);
  if (locked) return run.held(locked);
  try {
    await migrate(store.db);
    return await run.direct(store.db);
  } catch (error) {
    io.stderr(`rotscope token: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await store.close();
  }
}

function describeToken(token: TokenInfo): string {
  const name = token.name === '' ? '' : `"${token.name}", `;
  return `${name}workspace "${token.workspace}", scope "${token.scope}", ${token.prefix}…`;
}

/** The listing as aligned columns, one token a line. */
export function tokenTable(tokens: TokenInfo[]): string {
  if (tokens.length === 0) return 'no tokens\n';
  const rows = [
    ['ID', 'NAME', 'WORKSPACE', 'SCOPE', 'PREFIX', 'CREATED', 'REVOKED'],
    ...tokens.map((t) => [
      t.id,
      t.name === '' ? '-' : t.name,
      t.workspace,
      t.scope,
      `${t.prefix}…`,
      t.createdAt,
      t.revokedAt ?? '-',
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
    .concat('\n');
}
