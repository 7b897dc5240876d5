-- Token counts stored exactly (issue 10): the token columns of llm_calls and compactions
-- become bigint, so a count past 2^31 - 1 is kept as sent instead of clamped (ingest refuses
-- counts beyond 2^53 or below zero span by span; see docs/security.md "Token counts").
--
-- PostgreSQL refuses ALTER COLUMN ... TYPE on a column a view reads, so the reporting_v1
-- views over these tables are dropped and created again, exactly as migrations/0030 made them
-- (their columns carry explicit casts, so names, order and types stay what the reporting API
-- v1 promises; test/integration/reporting-views.test.ts pins them). They are dropped without
-- CASCADE: a view of your own on one of them stops this migration with PostgreSQL's
-- "other objects depend on it" rather than being dropped silently (docs/reporting.md).
-- The view privileges of the documented reporting role come back through its
-- ALTER DEFAULT PRIVILEGES.

DROP VIEW reporting_v1.calls;
DROP VIEW reporting_v1.calls_daily;
DROP VIEW reporting_v1.context_usage_daily;
DROP VIEW reporting_v1.compactions;
DROP VIEW reporting_v1.compactions_daily;

ALTER TABLE llm_calls
  ALTER COLUMN input_tokens_raw   TYPE bigint,
  ALTER COLUMN cache_read_tokens  TYPE bigint,
  ALTER COLUMN cache_write_tokens TYPE bigint,
  ALTER COLUMN output_tokens      TYPE bigint,
  ALTER COLUMN context_tokens     TYPE bigint,
  ALTER COLUMN max_output_tokens  TYPE bigint;

ALTER TABLE compactions
  ALTER COLUMN tokens_before TYPE bigint,
  ALTER COLUMN tokens_after  TYPE bigint;

CREATE VIEW reporting_v1.calls AS
SELECT
  c.workspace_id::text                                           AS workspace_id,
  c.trace_id::text                                               AS trace_id,
  c.span_id::text                                                AS span_id,
  c.conversation_id::text                                        AS conversation_id,
  c.run_id::text                                                 AS run_id,
  c.agent_id::text                                               AS agent_id,
  c.side_call::text                                              AS side_call,
  to_timestamp(c.start_ns / 1e9)::timestamptz                    AS started_at,
  (to_timestamp(c.start_ns / 1e9) AT TIME ZONE 'UTC')::date      AS day,
  ((c.end_ns - c.start_ns) / 1e6)::double precision              AS duration_ms,
  c.producer::text                                               AS producer,
  c.provider::text                                               AS provider,
  COALESCE(c.response_model, c.request_model)::text              AS model,
  c.input_tokens_raw::bigint                                     AS input_tokens,
  c.cache_read_tokens::bigint                                    AS cache_read_tokens,
  c.cache_write_tokens::bigint                                   AS cache_write_tokens,
  c.output_tokens::bigint                                        AS output_tokens,
  c.context_tokens::bigint                                       AS context_tokens,
  c.context_window::bigint                                       AS context_window,
  c.window_source::text                                          AS window_source,
  (c.context_tokens::double precision / NULLIF(c.context_window, 0))::double precision
                                                                 AS context_usage,
  c.finish_reason_raw::text                                      AS finish_reason,
  c.finish_class::text                                           AS finish_class,
  c.output_tool_call::boolean                                    AS output_tool_call,
  c.compacted::boolean                                           AS compacted
FROM public.llm_calls c;
COMMENT ON VIEW reporting_v1.calls IS
  'One row per finished LLM call. model = response model, else request model. context_usage = context_tokens / context_window (null when either is unknown).';

CREATE VIEW reporting_v1.calls_daily AS
SELECT
  (to_timestamp(c.start_ns / 1e9) AT TIME ZONE 'UTC')::date             AS day,
  c.workspace_id::text                                                  AS workspace_id,
  COALESCE(c.response_model, c.request_model)::text                     AS model,
  c.producer::text                                                      AS producer,
  count(*)::bigint                                                      AS calls,
  count(*) FILTER (WHERE c.side_call IS NOT NULL)::bigint               AS side_calls,
  count(DISTINCT c.conversation_id)::bigint                             AS conversations,
  COALESCE(sum(c.input_tokens_raw), 0)::bigint                          AS input_tokens,
  COALESCE(sum(c.cache_read_tokens), 0)::bigint                         AS cache_read_tokens,
  COALESCE(sum(c.cache_write_tokens), 0)::bigint                        AS cache_write_tokens,
  COALESCE(sum(c.output_tokens), 0)::bigint                             AS output_tokens,
  count(*) FILTER (WHERE c.finish_class = 'output_limit')::bigint       AS output_limit_calls,
  count(*) FILTER (WHERE c.finish_class = 'context_overflow')::bigint   AS context_overflow_calls,
  count(*) FILTER (WHERE c.finish_class = 'error')::bigint              AS error_calls
FROM public.llm_calls c
GROUP BY 1, 2, 3, 4;
COMMENT ON VIEW reporting_v1.calls_daily IS
  'LLM calls per UTC day (of the call''s start), workspace, model and producer, with token sums.';

CREATE VIEW reporting_v1.context_usage_daily AS
SELECT
  (to_timestamp(c.start_ns / 1e9) AT TIME ZONE 'UTC')::date                           AS day,
  c.workspace_id::text                                                                AS workspace_id,
  COALESCE(c.response_model, c.request_model)::text                                   AS model,
  count(*)::bigint                                                                    AS calls,
  max(c.context_window)::bigint                                                       AS context_window,
  percentile_cont(0.5) WITHIN GROUP (ORDER BY c.context_tokens)::double precision     AS context_tokens_p50,
  percentile_cont(0.9) WITHIN GROUP (ORDER BY c.context_tokens)::double precision     AS context_tokens_p90,
  percentile_cont(0.99) WITHIN GROUP (ORDER BY c.context_tokens)::double precision    AS context_tokens_p99,
  max(c.context_tokens)::bigint                                                       AS context_tokens_max,
  percentile_cont(0.5) WITHIN GROUP (ORDER BY c.context_tokens::double precision / NULLIF(c.context_window, 0))::double precision
                                                                                      AS usage_p50,
  percentile_cont(0.9) WITHIN GROUP (ORDER BY c.context_tokens::double precision / NULLIF(c.context_window, 0))::double precision
                                                                                      AS usage_p90,
  percentile_cont(0.99) WITHIN GROUP (ORDER BY c.context_tokens::double precision / NULLIF(c.context_window, 0))::double precision
                                                                                      AS usage_p99,
  max(c.context_tokens::double precision / NULLIF(c.context_window, 0))::double precision
                                                                                      AS usage_max
FROM public.llm_calls c
WHERE c.context_tokens IS NOT NULL AND c.side_call IS NULL
GROUP BY 1, 2, 3;
COMMENT ON VIEW reporting_v1.context_usage_daily IS
  'Context size percentiles per UTC day, workspace and model, over calls with token counts that are not side calls. usage_* are fractions of the window (null when no call of the group has a known window). Percentiles of different days cannot be combined: for a range, compute them from reporting_v1.calls.';

CREATE VIEW reporting_v1.compactions AS
SELECT
  k.id::bigint                                                 AS compaction_id,
  k.workspace_id::text                                         AS workspace_id,
  k.conversation_id::text                                      AS conversation_id,
  k.run_id::text                                               AS run_id,
  k.trace_id::text                                             AS trace_id,
  k.span_id::text                                              AS span_id,
  to_timestamp(k.at_ns / 1e9)::timestamptz                     AS at,
  (to_timestamp(k.at_ns / 1e9) AT TIME ZONE 'UTC')::date       AS day,
  k.kind::text                                                 AS kind,
  k.trigger::text                                              AS trigger,
  k.evidence::text                                             AS evidence,
  k.tokens_before::bigint                                      AS tokens_before,
  k.tokens_after::bigint                                       AS tokens_after,
  (k.tokens_before - k.tokens_after)::bigint                   AS tokens_freed,
  k.messages_kept::integer                                     AS messages_kept,
  k.summary_size::bigint                                       AS summary_size
FROM public.compactions k;
COMMENT ON VIEW reporting_v1.compactions IS
  'One row per compaction (the summary text itself is not exposed). tokens_freed = tokens_before - tokens_after when both are known.';

CREATE VIEW reporting_v1.compactions_daily AS
SELECT
  (to_timestamp(k.at_ns / 1e9) AT TIME ZONE 'UTC')::date                         AS day,
  k.workspace_id::text                                                           AS workspace_id,
  k.kind::text                                                                   AS kind,
  count(*)::bigint                                                               AS compactions,
  count(DISTINCT k.conversation_id)::bigint                                      AS conversations,
  percentile_cont(0.5) WITHIN GROUP (ORDER BY k.tokens_before)::double precision AS tokens_before_p50,
  COALESCE(sum(k.tokens_before - k.tokens_after), 0)::bigint                     AS tokens_freed
FROM public.compactions k
GROUP BY 1, 2, 3;
COMMENT ON VIEW reporting_v1.compactions_daily IS
  'Compactions per UTC day, workspace and kind.';
