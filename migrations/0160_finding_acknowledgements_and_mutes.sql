-- Acting on a finding (issue 37 §3).
--
-- Acknowledged: someone looked at it and said so, with a note. Both null until then;
-- acknowledging again replaces the note and the time. The list filters on it
-- (`GET /api/findings?acknowledged=false`), so the index is partial on what stays unread.
ALTER TABLE findings ADD COLUMN acknowledged_at timestamptz;
ALTER TABLE findings ADD COLUMN acknowledged_note text;
CREATE INDEX findings_unacknowledged_idx ON findings (workspace_id, created_at DESC, id DESC)
  WHERE acknowledged_at IS NULL;

-- Muted: a known problem that should stop alerting. A mute matches a finding on every field it
-- sets (the detector, the conversation's project exactly as stored, the finding's model); at
-- least one is set. `until` null: until deleted. A matching finding is still stored and listed;
-- its deliveries are written with status `muted` and the mute's id, and never sent.
CREATE TABLE mutes (
  id           bigserial PRIMARY KEY,
  workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  detector     text,
  project      text,
  model        text,
  until        timestamptz,
  note         text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT mutes_match_something
    CHECK (detector IS NOT NULL OR project IS NOT NULL OR model IS NOT NULL)
);
CREATE INDEX mutes_workspace_idx ON mutes (workspace_id, id DESC);

ALTER TABLE deliveries DROP CONSTRAINT deliveries_status_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_status_check
  CHECK (status IN ('pending', 'delivered', 'failed', 'dead', 'muted'));
-- The mute that held a delivery back; null once that mute is deleted (the row stays `muted`).
ALTER TABLE deliveries ADD COLUMN mute_id bigint REFERENCES mutes (id) ON DELETE SET NULL;
