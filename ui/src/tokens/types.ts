/** API tokens as `GET /api/tokens` lists them (never the token: its first characters). */
import type { Answer, Item } from '../api-types.ts';

export type TokenList = Answer<'/api/tokens'>;

export type TokenInfo = Item<TokenList>;

export type Scope = TokenInfo['scope'];

/** `POST /api/tokens`: the token itself, shown once. */
export type CreatedToken = Answer<'/api/tokens', 'post', 201>;

export const SCOPE_HELP: Record<Scope, string> = {
  ingest: 'sends OTLP data (/v1/traces, /v1/logs)',
  read: 'reads findings, runs and coverage',
  admin: 'everything, and changes the alert, channels and tokens',
};
