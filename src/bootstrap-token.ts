/**
 * The first API token of an installation, so a server bound to a non-loopback address (a
 * container) starts on its first run instead of refusing: the operator's
 * `ROTSCOPE_BOOTSTRAP_TOKEN` when given (the convention of database and dashboard images: an
 * initial secret from the environment), else a generated one for the caller to show once.
 * Bound to loopback with nothing given, the server stays open until a token is created.
 */
import { isLoopbackHost } from './api/auth.ts';
import type { Db } from './store/db.ts';
import { anyTokenExists, createToken } from './store/workspaces.ts';

/** The workspace and scope of the bootstrap token. */
export const BOOTSTRAP_WORKSPACE = 'default';
export const BOOTSTRAP_SCOPE = 'admin';

export type BootstrapResult =
  /** Tokens existed already (a given bootstrap token is then ignored), or loopback and none given. */
  | { kind: 'none'; ignoredGiven: boolean }
  /** The given bootstrap token was stored as the default workspace's admin token. */
  | { kind: 'stored' }
  /** No token existed on a non-loopback address: this one was created; show it once. */
  | { kind: 'generated'; token: string };

/** Creates the first token when none exists; see the module comment for the rules. */
export async function bootstrapToken(
  db: Db,
  options: { host: string; given: string | undefined },
): Promise<BootstrapResult> {
  if (await anyTokenExists(db)) return { kind: 'none', ignoredGiven: options.given !== undefined };
  if (options.given !== undefined) {
    await createToken(db, BOOTSTRAP_WORKSPACE, BOOTSTRAP_SCOPE, options.given);
    return { kind: 'stored' };
  }
  if (isLoopbackHost(options.host)) return { kind: 'none', ignoredGiven: false };
  const { token } = await createToken(db, BOOTSTRAP_WORKSPACE, BOOTSTRAP_SCOPE);
  return { kind: 'generated', token };
}
