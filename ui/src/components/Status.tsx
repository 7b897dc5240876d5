/** Shared bits every page shows while loading or when the API refuses. */
import type { ReactNode } from 'react';

export function Loading({ what }: { what?: string }) {
  return (
    <p className="muted" role="status">
      Loading{what ? ` ${what}` : ''}…
    </p>
  );
}

export function ErrorMessage({ error }: { error: Error | undefined }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {error.message}
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="muted empty">{children}</p>;
}
