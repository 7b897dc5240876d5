-- Late findings (issue 34 §1): a window that arrives after the calls (the agent's report, a
-- window override saved later) or a call that arrives between calls already evaluated makes the
-- evaluator judge those calls again; a finding that this creates is marked `late` (sent like any
-- other, its payload saying so). `judged_ns` is the furthest call (start, Unix ns) any
-- evaluation of the conversation has fed: a call at or before it was judged before, even when
-- a rewind moved `evaluated_ns` back (src/evaluator/evaluate.ts). Null until the next
-- evaluation: `evaluated_ns` stands in.
ALTER TABLE findings ADD COLUMN late boolean NOT NULL DEFAULT false;
ALTER TABLE conversations ADD COLUMN judged_ns bigint;
