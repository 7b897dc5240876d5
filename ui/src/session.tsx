/** Who the console is signed in as: loaded once from `GET /api/session`, shared by every page. */
import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { api, onSessionEnded, setCsrfToken, type Session } from './api.ts';

interface SessionState {
  session: Session | undefined;
  error: Error | undefined;
  signIn(token: string): Promise<void>;
  signOut(): Promise<void>;
}

const SessionContext = createContext<SessionState | undefined>(undefined);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<Session>();
  const [error, setError] = useState<Error>();
  const accept = useCallback((next: Session) => {
    setCsrfToken(next.csrfToken);
    setSession(next);
  }, []);
  const refresh = useCallback(
    () => api<Session>('/api/session').then(accept, (failure: Error) => setError(failure)),
    [accept],
  );
  useEffect(() => {
    onSessionEnded(() => void refresh());
    void refresh();
  }, [refresh]);
  const signIn = useCallback(
    async (token: string) =>
      accept(await api<Session>('/api/session', { method: 'POST', body: { token } })),
    [accept],
  );
  const signOut = useCallback(
    async () => accept(await api<Session>('/api/session', { method: 'DELETE' })),
    [accept],
  );
  return (
    <SessionContext.Provider value={{ session, error, signIn, signOut }}>
      {children}
    </SessionContext.Provider>
  );
}

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside SessionProvider');
  return state;
}

/** True when the session may use admin pages and actions. */
export function useIsAdmin(): boolean {
  return useSession().session?.scope === 'admin';
}
