-- One call, one row; one compaction, one row (DESIGN §5, issue 19 §4). The same Claude Code
-- request reaches rotscope as a span, a log event and a transcript line (`rotscope import`), and
-- one compaction as a log event, the hook's span and the transcript's boundary. The store keeps
-- one row of each (src/store/ingest.ts, the rules in src/store/merge.ts):
--
-- llm_calls.imported: what a session-file import (the transcript) said of a call whose row
--   telemetry owns, kept so that the row converges whatever the order the sources arrive in
--   (telemetry fields first, the import fills what telemetry lacks). Null when no import
--   contributed, or when the row is the import's own (producer claude_code_transcript).
-- compactions.sources: every source of the compaction (evidence, source key, time and what it
--   said), best first; the row's columns are merged from them. source_key stays unique: it is
--   the key of the row's best source, and re-sent secondary sources are found in `sources`.
-- conversations.history_before_ns: set by `rotscope import`: its start time. Findings anchored
--   on calls before it are history: stored with the call's time, never pushed to channels.
-- tool_results.received_at: the arrival time, as the other raw tables have, so that retention
--   treats the rows of a default partition alike (src/store/retention.ts).

ALTER TABLE llm_calls ADD COLUMN imported jsonb;
ALTER TABLE compactions ADD COLUMN sources jsonb NOT NULL DEFAULT '[]';
ALTER TABLE conversations ADD COLUMN history_before_ns bigint;
ALTER TABLE tool_results ADD COLUMN received_at timestamptz NOT NULL DEFAULT now();

-- The compactions stored so far each had one source: their own columns.
UPDATE compactions SET sources = jsonb_build_array(jsonb_strip_nulls(jsonb_build_object(
  'evidence', evidence, 'sourceKey', source_key, 'atNs', at_ns::text, 'kind', kind,
  'trigger', trigger, 'tokensBefore', tokens_before, 'tokensAfter', tokens_after,
  'messagesKept', messages_kept, 'summarySize', summary_size, 'summary', summary,
  'traceId', trace_id, 'spanId', span_id, 'streamKey', stream_key, 'runId', run_id)));

-- Calls imported twice before this migration (a transcript line beside the span or log event of
-- the same request): the telemetry row keeps what only the transcript knew, the copy goes. The
-- findings already made stay (findings are never retracted).
UPDATE llm_calls t SET
  output_tool_name = COALESCE(t.output_tool_name, x.output_tool_name),
  output_tool_call = CASE WHEN t.output_tool_call OR x.output_tool_call THEN true
                          ELSE COALESCE(t.output_tool_call, x.output_tool_call) END,
  finish_reason_raw = COALESCE(t.finish_reason_raw, x.finish_reason_raw),
  finish_class = CASE WHEN t.finish_reason_raw IS NULL THEN x.finish_class ELSE t.finish_class END
FROM llm_calls x
WHERE x.producer = 'claude_code_transcript' AND t.producer IN ('claude_code', 'claude_code_log')
  AND x.workspace_id = t.workspace_id AND x.request_id = t.request_id;
DELETE FROM llm_calls x
USING llm_calls t
WHERE x.producer = 'claude_code_transcript' AND t.producer IN ('claude_code', 'claude_code_log')
  AND x.workspace_id = t.workspace_id AND x.request_id = t.request_id;
