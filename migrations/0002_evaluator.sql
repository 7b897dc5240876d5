-- Evaluator bookkeeping (src/evaluator): failure backoff per conversation, and replay
-- checkpoints so that a late call re-evaluates from a nearby saved state instead of from the
-- conversation's first call.

ALTER TABLE conversations
  -- consecutive failed evaluations; reset by a successful one
  ADD COLUMN eval_failures integer NOT NULL DEFAULT 0,
  -- a failed conversation is not claimed again before this time (backoff)
  ADD COLUMN eval_retry_at timestamptz,
  -- the last failure's error code and message, for operators
  ADD COLUMN eval_error text;

-- The detectors' state after the call at (at_ns, at_span_id), saved every few hundred calls.
-- Items at or before that position (calls by (start_ns, span_id), compactions by at_ns) are
-- folded into the state. A late item before a checkpoint makes it stale: it is deleted.
CREATE TABLE evaluation_checkpoints (
  workspace_id    text NOT NULL,
  conversation_id text NOT NULL,
  at_ns           bigint NOT NULL,
  at_span_id      text NOT NULL,
  state           jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, conversation_id, at_ns, at_span_id),
  FOREIGN KEY (workspace_id, conversation_id) REFERENCES conversations (workspace_id, id) ON DELETE CASCADE
);
