/**
 * The requests refused for their token lately, as the Coverage page shows them (GET
 * /api/coverage): each with its reason in words, what to do about it and whether data accepted
 * since settled it. They are recorded by src/api/refusals.ts and stored by
 * src/store/refusals.ts.
 */
import type { Db } from '../store/db.ts';
import {
  lastAcceptedIngest,
  NO_WORKSPACE,
  recentRefusals,
  refusalsWithoutWorkspace,
} from '../store/refusals.ts';

/** The refusal reason in words. */
export function reasonText(reason: string): string {
  const scope = /^scope:(\w+):(\w+)$/.exec(reason);
  if (scope) return `a token with scope "${scope[1]}" where "${scope[2]}" is needed`;
  return (
    {
      missing_token: 'no token sent',
      malformed_header: 'an Authorization header that is not "Bearer <token>"',
      unknown_token: 'an unknown or revoked token',
      session_ended: 'a console session that ended',
      host_refused: 'a Host this server does not answer to while no token exists',
      origin_refused: 'a change from a page of another site while no token exists',
    }[reason] ?? 'refused'
  );
}

/**
 * What to do about a refusal, for the person reading the Coverage page; `reader` is their
 * workspace (where a token for a refusal of no workspace would be made).
 */
export function refusalHint(
  refusal: { reason: string; route: string; workspaceId: string },
  reader: string,
): string {
  const otlp = /^[A-Z]+ \/v1\//.test(refusal.route);
  const workspace = refusal.workspaceId === NO_WORKSPACE ? reader : refusal.workspaceId;
  const create = `rotscope token create --workspace ${workspace} --scope ingest`;
  const header =
    'OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer <token> (Claude Code: in the env of its settings.json, which rotscope claude-code install --token <token> writes)';
  const scope = /^scope:(\w+):(\w+)$/.exec(refusal.reason);
  if (scope) {
    const [, has, needs] = scope;
    if (otlp)
      return `Your exporter sends a ${has} token; sending telemetry needs an ingest token: create one (${create}) and set ${header}.`;
    return needs === 'admin'
      ? `A ${has} token tried to change settings: that needs an admin token of the workspace.`
      : `A ${has} token was used where "${needs}" is needed: use a ${needs} token (or an admin one); an ingest token only sends telemetry.`;
  }
  switch (refusal.reason) {
    case 'missing_token':
      return otlp
        ? `Your exporter sends no token, so every batch is refused and lost. Create an ingest token (${create}) and set ${header}.`
        : 'A client called the API without a token: send the header Authorization: Bearer <token> (a read token; admin for settings).';
    case 'malformed_header':
      return otlp
        ? `Your exporter's Authorization header is not "Bearer <token>" (the word Bearer, a space, the token): set ${header}.`
        : 'A client sent an Authorization header that is not "Bearer <token>".';
    case 'unknown_token':
      return otlp
        ? `Your exporter sends a token this server does not know, or one that was revoked: create a new ingest token (${create}) and replace it in OTEL_EXPORTER_OTLP_HEADERS.`
        : 'A client sent a token this server does not know, or one that was revoked: create a new one (rotscope token create).';
    case 'session_ended':
      return 'A console session ended (its token was revoked): sign in again with a valid token.';
    case 'host_refused':
      return 'Something reached this server under a name it does not answer to while no token exists: if that was you, set ROTSCOPE_PUBLIC_URL to the address you use, or create a token; otherwise nothing to do, it was refused.';
    case 'origin_refused':
      return 'A page of another site tried to change this server while no token exists: it was refused. Create a token to close the open mode.';
    default:
      return 'Check the token the client sends.';
  }
}

/** How far back the Coverage page lists refused requests. */
const REFUSALS_DAYS = 7;

/**
 * The recent refusals a caller may see: its workspace's; those of no workspace (requests
 * without a valid token, which belong to nobody) listed for an admin token only, else
 * counted. Nothing kept is secret (src/api/refusals.ts records them), but which routes and senders are
 * refused is an operator's business on a server several workspaces share.
 */
export async function refusalsOf(db: Db, workspaceId: string, admin: boolean) {
  const since = new Date(Date.now() - REFUSALS_DAYS * 24 * 60 * 60 * 1000);
  const [rows, without, accepted] = await Promise.all([
    recentRefusals(db, { workspaceId, since, withoutWorkspace: admin }),
    admin ? undefined : refusalsWithoutWorkspace(db, since),
    lastAcceptedIngest(db, workspaceId),
  ]);
  // Data accepted after a refusal: the sender (or one like it) got through since, so the refusal
  // is history, not a lockout going on. A newer refusal is not settled, and alarms again.
  const settled = (lastSeen: Date | null) =>
    accepted !== null && lastSeen !== null && lastSeen < accepted;
  return {
    since: since.toISOString(),
    acceptedAt: accepted?.toISOString() ?? null,
    items: rows.map((row) => ({
      workspace: row.workspaceId === NO_WORKSPACE ? null : row.workspaceId,
      status: row.status,
      route: row.route,
      reason: row.reason,
      reasonText: reasonText(row.reason),
      agent: row.agent,
      count: row.count,
      firstSeen: row.firstSeen.toISOString(),
      lastSeen: row.lastSeen.toISOString(),
      hint: refusalHint(row, workspaceId),
      settled: settled(row.lastSeen),
    })),
    withoutWorkspace:
      without && without.count > 0
        ? {
            count: without.count,
            lastSeen: without.lastSeen?.toISOString() ?? null,
            settled: settled(without.lastSeen),
          }
        : null,
  };
}
