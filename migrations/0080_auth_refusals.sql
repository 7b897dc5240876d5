-- Requests refused for their token (401, 403), so a user sees that an exporter is locked out
-- (issue 23 §2: Claude Code sending without the Authorization header lost its data silently).
-- One row per workspace, status, route, reason and sender, counted, with when it was first and
-- last seen; the console's Coverage page and GET /api/coverage show the recent ones.
--
-- `workspace_id` is '' when no token told the workspace (no token, an unknown or revoked one):
-- such refusals belong to no workspace. `reason` is a code from a short fixed list
-- (src/api/refusals.ts), `agent` the product name of the sender's User-Agent (its first word,
-- e.g. `OTel-OTLP-Exporter-JavaScript`); neither holds a header value, a token or an address.
-- Every server process adds its counts at most once a second; rows not seen for 30 days, and
-- all but the 1000 seen last, are removed.
CREATE TABLE auth_refusals (
  workspace_id text NOT NULL,
  status smallint NOT NULL,
  route text NOT NULL,
  reason text NOT NULL,
  agent text NOT NULL,
  count bigint NOT NULL,
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, status, route, reason, agent)
);

CREATE INDEX auth_refusals_last_seen ON auth_refusals (last_seen);
