/** API tokens as `GET /api/tokens` lists them (never the token: its first characters). */
export type Scope = 'ingest' | 'read' | 'admin';

export interface TokenInfo {
  id: string;
  name: string;
  workspace: string;
  scope: Scope;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface CreatedToken {
  id: string;
  token: string;
  workspace: string;
  scope: Scope;
  name: string;
}

export const SCOPE_HELP: Record<Scope, string> = {
  ingest: 'sends OTLP data (/v1/traces, /v1/logs)',
  read: 'reads findings, runs and coverage',
  admin: 'everything, and changes the alert, channels and tokens',
};
