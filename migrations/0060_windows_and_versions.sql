-- Windows that stay right (issue 19 §3): the version of the agent that made each call, where
-- rotscope reads the agent by name (Claude Code: `service.version` of its spans and log events,
-- a transcript line's `version`). A model's default window can depend on it (the catalog rows
-- of src/model/window-catalog.ts bound to Claude Code versions), the evaluator re-applies the
-- catalog with it when a window override changes, and /api/coverage lists the versions seen
-- (warning about one newer than the newest verified). Null for other producers and for calls
-- stored before this migration.
--
-- `window_source` (text) gains the value `model_id` (`[1m]` / `-1m` in the model id, stored as
-- `catalog` before): no change to the column.

ALTER TABLE llm_calls ADD COLUMN agent_version text;
