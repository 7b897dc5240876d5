-- The range of a conversation's call starts (issue 39): every stored call of the conversation
-- starts at or after `calls_from_ns` and at or before `calls_to_ns`. The evaluator reads a
-- conversation's calls within it, so PostgreSQL scans only the daily partitions of
-- `llm_calls` (migration 0010) the conversation has calls in, instead of one index range per
-- partition kept (30 days by default, and the 7 ahead). Ingest widens it with every call it
-- inserts (src/store/conversations.ts `noteConversations`). Both null: unknown (rows from
-- before this migration, calls written without their starts): no bound, every partition is
-- read, as before. `calls_from_ns` > `calls_to_ns`: the conversation has no call yet.
ALTER TABLE conversations ADD COLUMN calls_from_ns bigint, ADD COLUMN calls_to_ns bigint;
