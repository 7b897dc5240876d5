-- The token of a conversation's calls an evaluator holds in memory (issue 39; the rules are in
-- src/store/call-memo.ts). Ingest hands the calls it inserts to its own process's evaluator as
-- it commits them, so the evaluator judges them without reading them back. The row's token says
-- whether that memory is exactly the stored rows: an evaluation that read the calls from the
-- database stores a new one, a write that only inserts new calls under the same token keeps it,
-- and any other write of the conversation's calls or compactions sets it to null. Null: no
-- memory stands in; the evaluator reads the calls, as before. Like the range of call starts
-- (migration 0190), it counts only while `calls_noted_at` equals `last_ingest_at`: a process of
-- an earlier version, still running during an upgrade, does not know this column.
ALTER TABLE conversations ADD COLUMN calls_token bigint;
