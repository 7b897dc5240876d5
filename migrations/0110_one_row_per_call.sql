-- One row per LLM call, no raw span copy by default (issue 22). What was lost read the messages
-- of a dropped call from its raw `spans` row; they now live with the call: `input_messages`
-- holds the span attributes src/ingest/message-text.ts reads (`gen_ai.input.messages`,
-- `gen_ai.system_instructions`, `llm.input_messages.*`) as JSON text, null when content was not
-- captured. Text, not jsonb: only What was lost reads it, and parsing kilobytes of messages into
-- jsonb on every insert was the database's largest cost per call with content.
-- The `spans` table stays, written only with ROTSCOPE_KEEP_RAW_SPANS=true (debugging); the rows
-- it holds now age out with retention.
ALTER TABLE llm_calls ADD COLUMN input_messages text;

-- The calls stored before: their messages from their raw spans (one pass over the LLM spans).
UPDATE llm_calls c
   SET input_messages = m.attributes::text
  FROM (SELECT s.workspace_id, s.trace_id, s.span_id, s.start_ns,
               (SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(s.attributes) AS e
                 WHERE e.key IN ('gen_ai.input.messages', 'gen_ai.system_instructions')
                    OR e.key LIKE 'llm.input\_messages.%') AS attributes
          FROM spans s
         WHERE s.role = 'llm_call') AS m
 WHERE m.attributes IS NOT NULL
   AND c.workspace_id = m.workspace_id AND c.trace_id = m.trace_id
   AND c.span_id = m.span_id AND c.start_ns = m.start_ns;

-- A run's calls are read by their trace id (the primary key) or, for producers whose run is the
-- session, by their conversation (llm_calls_conversation_idx): a run id is always one of the two
-- (src/store/scope.ts). The index on run_id costs every insert and serves no reader.
DROP INDEX llm_calls_run_idx;

-- The messages are kilobytes per call and only What was lost reads them: stored out of line
-- without compression, which costs disk but not the insert's CPU (pglz was most of it).
ALTER TABLE llm_calls ALTER COLUMN input_messages SET STORAGE EXTERNAL;
