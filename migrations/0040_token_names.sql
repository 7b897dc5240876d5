-- A name for each API token, so a listing tells them apart ("ci ingest", "grafana read").
-- Tokens made before this migration have the empty name; listings show their prefix instead.
ALTER TABLE api_tokens ADD COLUMN name text NOT NULL DEFAULT '';
