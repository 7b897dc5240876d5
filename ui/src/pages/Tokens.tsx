/**
 * API tokens (admin): listed by name, scope and workspace (their first characters, never the
 * token), created (the token is shown once, in this page's memory only) and revoked.
 */
import { useState } from 'react';
import { api, useApi } from '../api.ts';
import { ErrorMessage, Empty, Loading } from '../components/Status.tsx';
import { formatTime } from '../format.ts';
import type { Route } from '../router.ts';
import { useSession } from '../session.tsx';
import { TokenForm } from '../tokens/TokenForm.tsx';
import type { CreatedToken, TokenInfo } from '../tokens/types.ts';

export default function TokensPage(_props: { route: Route }) {
  const { session } = useSession();
  const [showRevoked, setShowRevoked] = useState(false);
  const tokens = useApi<{ items: TokenInfo[] }>(
    `/api/tokens${showRevoked ? '?includeRevoked=true' : ''}`,
  );
  const [created, setCreated] = useState<CreatedToken>();
  const [error, setError] = useState<Error>();

  async function revoke(token: TokenInfo) {
    const label = token.name || `${token.prefix}…`;
    if (!window.confirm(`Revoke the token “${label}”? Whatever uses it stops working.`)) return;
    setError(undefined);
    try {
      await api(`/api/tokens/${token.id}/revoke`, { method: 'POST' });
      if (created?.id === token.id) setCreated(undefined);
      tokens.reload();
    } catch (failure) {
      setError(failure as Error);
    }
  }

  return (
    <section className="tokens-page">
      <h1>Tokens</h1>
      {created && (
        <div className="secret-once" role="status">
          <p>
            New {created.scope} token{created.name ? ` “${created.name}”` : ''} for workspace{' '}
            <strong>{created.workspace}</strong>, shown once: store it now, it is never shown again.
          </p>
          <code className="secret" aria-label="the new token, shown once">
            {created.token}
          </code>
          <button type="button" className="secondary" onClick={() => setCreated(undefined)}>
            I stored it
          </button>
        </div>
      )}
      <TokenForm
        workspace={session?.workspaceId ?? 'default'}
        anyWorkspace={session?.open === true && !session.authenticated}
        onCreated={(token) => {
          setCreated(token);
          tokens.reload();
        }}
      />
      <h2>Tokens</h2>
      <label className="check">
        <input
          type="checkbox"
          checked={showRevoked}
          onChange={(event) => setShowRevoked(event.target.checked)}
        />
        Show revoked tokens
      </label>
      <ErrorMessage error={tokens.error ?? error} />
      {tokens.loading && !tokens.data && <Loading what="tokens" />}
      {tokens.data && tokens.data.items.length === 0 && <Empty>No tokens.</Empty>}
      {tokens.data && tokens.data.items.length > 0 && (
        <table className="tokens">
          <thead>
            <tr>
              <th>Name</th>
              <th>Scope</th>
              <th>Workspace</th>
              <th>Token</th>
              <th>Created</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {tokens.data.items.map((token) => (
              <tr
                key={token.id}
                data-token={token.id}
                className={token.revokedAt ? 'revoked' : undefined}
              >
                <td>{token.name || <span className="muted">unnamed</span>}</td>
                <td>{token.scope}</td>
                <td>{token.workspace}</td>
                <td>
                  <code>{token.prefix}…</code>
                </td>
                <td className="nowrap">{formatTime(token.createdAt)}</td>
                <td>
                  {token.revokedAt ? (
                    <span className="muted">revoked {formatTime(token.revokedAt)}</span>
                  ) : (
                    <button
                      type="button"
                      className="danger"
                      aria-label={`Revoke ${token.name || token.prefix}`}
                      onClick={() => void revoke(token)}
                    >
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
