/**
 * Creates a token: a name, a scope and (open on loopback only, before the first token) a
 * workspace; otherwise the session's own workspace. The token itself comes back once.
 */
import { useState, type FormEvent } from 'react';
import { api, useAction } from '../api.ts';
import { ErrorMessage } from '../components/Status.tsx';
import { SCOPE_HELP, type CreatedToken, type Scope } from './types.ts';

export function TokenForm({
  workspace,
  anyWorkspace,
  onCreated,
}: {
  workspace: string;
  /** Open on loopback with no token yet: a token may be made for any workspace. */
  anyWorkspace: boolean;
  onCreated: (created: CreatedToken) => void;
}) {
  const [name, setName] = useState('');
  const [scope, setScope] = useState<Scope>('ingest');
  const [target, setTarget] = useState(workspace);
  const { busy, error, run } = useAction();

  async function submit(event: FormEvent) {
    event.preventDefault();
    await run(async () => {
      const created = await api<CreatedToken>('/api/tokens', {
        method: 'POST',
        body: { name: name.trim(), scope, workspace: anyWorkspace ? target.trim() : workspace },
      });
      setName('');
      onCreated(created);
    });
  }

  return (
    <form className="token-form" onSubmit={submit} aria-label="New token">
      <h2>New token</h2>
      <div className="row">
        <label>
          Name
          <input
            value={name}
            onChange={(event) => setName(event.target.value)}
            placeholder="ci ingest"
          />
        </label>
        <label>
          Scope
          <select value={scope} onChange={(event) => setScope(event.target.value as Scope)}>
            {(Object.keys(SCOPE_HELP) as Scope[]).map((value) => (
              <option key={value} value={value}>
                {value}
              </option>
            ))}
          </select>
        </label>
        <label>
          Workspace
          <input
            value={anyWorkspace ? target : workspace}
            disabled={!anyWorkspace}
            onChange={(event) => setTarget(event.target.value)}
          />
        </label>
        <button type="submit" disabled={busy}>
          Create token
        </button>
      </div>
      <p className="muted">
        {scope}: {SCOPE_HELP[scope]}.
      </p>
      <ErrorMessage error={error} />
    </form>
  );
}
