-- How long a conversation must stay quiet before evaluation, beyond the evaluator's default:
-- set by ingest for producers that send a call's evidence in two signals (Claude Code: spans
-- and log events on separate export schedules), so a compaction reported in the logs is seen
-- before the drop it explains is judged.
ALTER TABLE conversations ADD COLUMN settle_ms integer NOT NULL DEFAULT 0;
