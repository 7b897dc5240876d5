/** What an API token may do. `admin` satisfies every scope; `read` and `ingest` only themselves. */
export type Scope = 'ingest' | 'read' | 'admin';

/** Every scope, least to most. */
export const SCOPES: readonly Scope[] = ['ingest', 'read', 'admin'];
