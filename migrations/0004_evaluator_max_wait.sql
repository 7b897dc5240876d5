-- When a conversation last became dirty (set by ingest when it turns a clean conversation
-- dirty, kept while it stays dirty, cleared by the evaluator when it clears dirty). Lets the
-- evaluator take a conversation that never goes quiet (a steady stream of spans) once it has
-- waited long enough, instead of waiting for a quiet period that never comes.
ALTER TABLE conversations ADD COLUMN dirty_since timestamptz;
UPDATE conversations SET dirty_since = last_ingest_at WHERE dirty;
