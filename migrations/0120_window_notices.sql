-- A model no source knows is said out loud, once (issue 34 §2). When the evaluator first meets a
-- workspace's calls of a model with token counts but no window (context_too_full cannot judge
-- them), it writes one `window_notices` row and queues a `window.unknown` delivery per channel of
-- the Context rot alert, in the evaluation's transaction (src/store/window-notices.ts). While the
-- row is open (`known_at` null) no other notice goes out for that model; saving a window override
-- that matches it closes the row, so the model going unknown again is a new notice.
CREATE TABLE window_notices (
  id              bigserial PRIMARY KEY,
  workspace_id    text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  -- The response model, else the request model, as the calls name it.
  model           text NOT NULL,
  -- The unjudged calls and conversations of the evaluations that raised it, and one of them.
  calls           integer NOT NULL,
  conversations   integer NOT NULL,
  conversation_id text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  -- When a window override for the model was saved; null while the window is unknown.
  known_at        timestamptz
);
CREATE UNIQUE INDEX window_notices_open_idx ON window_notices (workspace_id, model)
  WHERE known_at IS NULL;

-- The outbox announces a finding or a window notice: exactly one of the two.
ALTER TABLE deliveries ALTER COLUMN finding_id DROP NOT NULL;
ALTER TABLE deliveries ADD COLUMN notice_id bigint REFERENCES window_notices (id) ON DELETE CASCADE;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_one_subject
  CHECK ((finding_id IS NULL) <> (notice_id IS NULL));
CREATE UNIQUE INDEX deliveries_notice_idx ON deliveries (notice_id, channel_id, event)
  WHERE notice_id IS NOT NULL;
