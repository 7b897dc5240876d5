-- What the Claude Code tool-result guard did (issue 25): one row per decision the guard sent as
-- a `rotscope.guard` span (src/cli/guard.ts, read by src/ingest/guard-spans.ts): a Read
-- narrowed or a large result warned about, in which session, and the tokens it kept out of the
-- context. The conversation page sums them per session. Re-sent spans are one row (the span id).
CREATE TABLE guard_decisions (
  workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  conversation_id text NOT NULL,
  span_id text NOT NULL,
  at_ns bigint NOT NULL,
  action text NOT NULL,
  tool text NOT NULL,
  result_tokens bigint NOT NULL,
  budget_tokens bigint NOT NULL,
  kept_out_tokens bigint NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, conversation_id, span_id)
);
