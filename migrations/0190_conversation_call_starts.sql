-- The range of a conversation's call starts (issue 39): every stored call of the conversation
-- starts at or after `calls_from_ns` and at or before `calls_to_ns`. The evaluator reads a
-- conversation's calls within it, so PostgreSQL scans only the daily partitions of
-- `llm_calls` (migration 0010) the conversation has calls in, instead of one index range per
-- partition kept (30 days by default, and the 7 ahead). Ingest widens it with every call it
-- inserts (src/store/conversations.ts `noteConversations`). Both null: unknown (rows from
-- before this migration, calls written without their starts): no bound, every partition is
-- read, as before. `calls_from_ns` > `calls_to_ns`: the conversation has no call yet.
--
-- `calls_noted_at`: the `last_ingest_at` the range was last kept with. Every writer of this
-- version moves both together; a process of an earlier version still running during an upgrade
-- moves `last_ingest_at` alone when it marks calls, without widening the range. A row whose two
-- differ has a range that may miss calls: it reads as unknown, and becomes unknown at the next
-- mark, for good.
ALTER TABLE conversations ADD COLUMN calls_from_ns bigint, ADD COLUMN calls_to_ns bigint,
  ADD COLUMN calls_noted_at timestamptz;
