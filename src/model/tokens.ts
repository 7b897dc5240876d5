/** What an API token may do. `admin` satisfies every scope; `read` and `ingest` only themselves. */
export type Scope = 'ingest' | 'read' | 'admin';

/** Every scope, least to most. */
export const SCOPES: readonly Scope[] = ['ingest', 'read', 'admin'];

/**
 * Why a token of `scope` may not be created in a workspace that has no admin token yet, or null
 * when it may. A workspace's first token must be admin: a first `ingest` or `read` token closes
 * the open loopback server (and the console) while leaving no token that can create, list or
 * revoke tokens, so its owner would be locked out.
 */
export function firstTokenRefusal(
  workspace: string,
  scope: Scope,
  workspaceHasAdmin: boolean,
): string | null {
  if (scope === 'admin' || workspaceHasAdmin) return null;
  return (
    `workspace "${workspace}" has no admin token yet, and a first ${scope} token would lock you out ` +
    `(no token could then create or revoke tokens, and the console would ask for one): create ` +
    `its admin token first (rotscope token create --workspace ${workspace} --scope admin)`
  );
}
