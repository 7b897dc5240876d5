-- Keyed evaluation state (issue 39): each evaluator process keeps the detectors' state of the
-- conversations it evaluated in memory and reads a conversation's stored `state` only when it
-- has no copy, or not the latest. Every save of a position and state writes a new random
-- token; a process whose copy carries the row's token holds the state stored with the row's
-- position, and the claim does not read `state` at all. Null: never saved since this column
-- exists (no copy matches it). Anything else that writes `state` or the position sets it to
-- null (or a new token).
ALTER TABLE conversations ADD COLUMN state_token bigint;
