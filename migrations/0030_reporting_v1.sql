-- The reporting API, version 1 (docs/reporting.md): views for SQL reporting and dashboards,
-- in a schema of their own so a read-only role can be given these and nothing else.
--
-- Stable like an HTTP API: within reporting_v1 a view's columns (names, order, types) never
-- change; views may be added. A breaking change is a new schema (reporting_v2) beside this
-- one. test/integration/reporting-views.test.ts pins every column against
-- test/integration/reporting-v1-columns.json.
--
-- Every column has an explicit type (casts), so a change of a raw table's column type does not
-- leak into the views. Days are UTC calendar days. Message content (compaction summaries,
-- prompts) and channel configuration or secrets are not exposed.

CREATE SCHEMA reporting_v1;
COMMENT ON SCHEMA reporting_v1 IS
  'rotscope reporting API v1: stable views (docs/reporting.md). Columns never change within v1.';

CREATE VIEW reporting_v1.workspaces AS
SELECT
  w.id::text                       AS workspace_id,
  w.capture_content::boolean       AS capture_content,
  w.created_at::timestamptz        AS created_at
FROM public.workspaces w;
COMMENT ON VIEW reporting_v1.workspaces IS 'One row per workspace.';

-- Findings -------------------------------------------------------------------------------

CREATE VIEW reporting_v1.findings AS
SELECT
  f.id::bigint                                 AS finding_id,
  f.workspace_id::text                         AS workspace_id,
  f.detector::text                             AS detector,
  f.severity::text                             AS severity,
  f.kind::text                                 AS kind,
  f.conversation_id::text                      AS conversation_id,
  f.run_id::text                               AS run_id,
  f.trace_id::text                             AS trace_id,
  f.span_id::text                              AS span_id,
  f.model::text                                AS model,
  f.summary::text                              AS summary,
  f.details::jsonb                             AS details,
  f.created_at::timestamptz                    AS created_at,
  f.updated_at::timestamptz                    AS updated_at,
  (f.created_at AT TIME ZONE 'UTC')::date      AS day
FROM public.findings f;
COMMENT ON VIEW reporting_v1.findings IS
  'One row per finding (never duplicated, never deleted). severity is the current one (raised, never lowered).';

CREATE VIEW reporting_v1.findings_daily AS
SELECT
  (f.created_at AT TIME ZONE 'UTC')::date      AS day,
  f.workspace_id::text                         AS workspace_id,
  f.detector::text                             AS detector,
  f.severity::text                             AS severity,
  count(*)::bigint                             AS findings,
  count(DISTINCT f.conversation_id)::bigint    AS conversations
FROM public.findings f
GROUP BY 1, 2, 3, 4;
COMMENT ON VIEW reporting_v1.findings_daily IS
  'Findings created per UTC day, workspace, detector and (current) severity.';

-- LLM calls ------------------------------------------------------------------------------

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

-- Compactions ----------------------------------------------------------------------------

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

-- Delivery health ------------------------------------------------------------------------

CREATE VIEW reporting_v1.deliveries AS
SELECT
  d.id::text                                                          AS delivery_id,
  d.workspace_id::text                                                AS workspace_id,
  d.finding_id::bigint                                                AS finding_id,
  d.channel_id::bigint                                                AS channel_id,
  ch.type::text                                                       AS channel_type,
  ch.name::text                                                       AS channel_name,
  d.event::text                                                       AS event,
  d.status::text                                                      AS status,
  d.attempts::integer                                                 AS attempts,
  d.created_at::timestamptz                                           AS created_at,
  (d.created_at AT TIME ZONE 'UTC')::date                             AS day,
  d.delivered_at::timestamptz                                         AS delivered_at,
  extract(epoch FROM (d.delivered_at - d.created_at))::double precision AS delivery_seconds,
  (CASE WHEN d.status = 'pending' THEN d.next_attempt_at END)::timestamptz AS next_attempt_at,
  d.last_error::text                                                  AS last_error
FROM public.deliveries d
JOIN public.channels ch ON ch.id = d.channel_id;
COMMENT ON VIEW reporting_v1.deliveries IS
  'One row per queued notification (finding event x channel). delivery_seconds: from queueing to the successful send.';

CREATE VIEW reporting_v1.delivery_health_daily AS
SELECT
  (d.created_at AT TIME ZONE 'UTC')::date                                        AS day,
  d.workspace_id::text                                                           AS workspace_id,
  d.channel_id::bigint                                                           AS channel_id,
  ch.type::text                                                                  AS channel_type,
  ch.name::text                                                                  AS channel_name,
  count(*)::bigint                                                               AS deliveries,
  count(*) FILTER (WHERE d.status = 'delivered')::bigint                         AS delivered,
  count(*) FILTER (WHERE d.status = 'pending')::bigint                           AS pending,
  count(*) FILTER (WHERE d.status = 'failed')::bigint                            AS failed,
  count(*) FILTER (WHERE d.status = 'dead')::bigint                              AS dead,
  COALESCE(sum(d.attempts), 0)::bigint                                           AS attempts,
  count(*) FILTER (WHERE d.attempts > 1)::bigint                                 AS retried,
  percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM (d.delivered_at - d.created_at)))::double precision
                                                                                 AS delivery_seconds_p50,
  percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM (d.delivered_at - d.created_at)))::double precision
                                                                                 AS delivery_seconds_p95,
  max(extract(epoch FROM (d.delivered_at - d.created_at)))::double precision     AS delivery_seconds_max
FROM public.deliveries d
JOIN public.channels ch ON ch.id = d.channel_id
GROUP BY 1, 2, 3, 4, 5;
COMMENT ON VIEW reporting_v1.delivery_health_daily IS
  'Deliveries queued per UTC day and channel, by status now, with attempts and time to delivery.';

CREATE VIEW reporting_v1.delivery_backlog AS
SELECT
  d.workspace_id::text                                                             AS workspace_id,
  d.channel_id::bigint                                                             AS channel_id,
  ch.type::text                                                                    AS channel_type,
  ch.name::text                                                                    AS channel_name,
  count(*)::bigint                                                                 AS pending,
  count(*) FILTER (WHERE d.next_attempt_at <= now())::bigint                       AS due,
  count(*) FILTER (WHERE d.attempts > 0)::bigint                                   AS retrying,
  min(d.created_at)::timestamptz                                                   AS oldest_created_at,
  extract(epoch FROM (now() - min(d.created_at)))::double precision                AS oldest_age_seconds
FROM public.deliveries d
JOIN public.channels ch ON ch.id = d.channel_id
WHERE d.status = 'pending'
GROUP BY 1, 2, 3, 4;
COMMENT ON VIEW reporting_v1.delivery_backlog IS
  'Pending deliveries per channel now (the outbox backlog): due = may be claimed now; retrying = attempted at least once.';
