-- Whether a call's output held a tool call may be unknown: Claude Code's plain spans and its
-- api_request log events say `stop_reason` but not what the output was (only detailed beta
-- tracing's `response.has_tool_call` and transcripts do). NULL means unknown.
ALTER TABLE llm_calls ALTER COLUMN output_tool_call DROP NOT NULL;
