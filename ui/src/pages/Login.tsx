/** Sign in: the token is pasted once and kept by the server in an HttpOnly cookie. */
import { useState, type FormEvent } from 'react';
import { useAction } from '../api.ts';
import { ErrorMessage } from '../components/Status.tsx';
import { useSession } from '../session.tsx';

export default function Login() {
  const { signIn } = useSession();
  const [token, setToken] = useState('');
  const { busy, error, run } = useAction();
  async function submit(event: FormEvent) {
    event.preventDefault();
    await run(() => signIn(token.trim()));
  }
  return (
    <main className="login">
      <h1>rotscope</h1>
      <form onSubmit={submit}>
        <label htmlFor="token">API token</label>
        <input
          id="token"
          type="password"
          autoComplete="off"
          value={token}
          onChange={(event) => setToken(event.target.value)}
          placeholder="rs_…"
        />
        <p className="muted">
          A read token shows findings, runs and coverage; an admin token also changes the alert,
          channels and tokens. Create one with <code>rotscope token create</code>.
        </p>
        <button type="submit" disabled={busy || token.trim() === ''}>
          Sign in
        </button>
        <ErrorMessage error={error} />
      </form>
    </main>
  );
}
