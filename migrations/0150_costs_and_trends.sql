-- Cost per call, and trends (issue 37 §1, §2).
--
-- `llm_calls.cost_usd`: what the producer said the call cost, in US dollars, when it says
-- (Claude Code's `cost_usd` on every `claude_code.api_request` log event); null otherwise.
-- rotscope never prices a call itself.
ALTER TABLE llm_calls ADD COLUMN cost_usd double precision;

-- reporting_v1 gains views (the old ones are unchanged). The per-conversation figures are the
-- ones `GET /api/trends` answers (src/store/trends.ts writes the same query, bounded in time;
-- test/integration/api-trends.test.ts holds the two equal):
-- - a conversation belongs to the UTC day and ISO week (Monday) of its FIRST call, with all of
--   its calls, cost and findings, so rates per conversation stay on one timeline;
-- - model: of its first main call (side calls after) that names one; producer likewise;
-- - tokens_over_threshold: context tokens (everything sent: input + cache reads + cache
--   writes) summed over its calls whose stored usage (context_tokens / context_window) is at or
--   above the workspace's usageThreshold (alert_settings, else the default 0.7 of
--   src/model/threshold-table.ts); calls without a window or token counts add nothing.
CREATE VIEW reporting_v1.conversation_trends AS
WITH conv AS (
  SELECT
    c.workspace_id,
    c.conversation_id,
    min(c.start_ns) AS first_ns,
    count(*) AS calls,
    sum(c.cost_usd) AS cost_usd,
    count(c.cost_usd) AS costed_calls,
    sum(c.context_tokens) FILTER (
      WHERE c.context_window > 0
        AND c.context_tokens::float8 / c.context_window >= COALESCE(
          (SELECT CASE WHEN jsonb_typeof(s.thresholds -> 'usageThreshold') = 'number'
                       THEN (s.thresholds ->> 'usageThreshold')::float8 END
             FROM public.alert_settings s WHERE s.workspace_id = c.workspace_id), 0.7)
    ) AS tokens_over_threshold,
    (array_agg(COALESCE(c.response_model, c.request_model)
       ORDER BY c.side_call IS NOT NULL, c.start_ns, c.span_id)
       FILTER (WHERE COALESCE(c.response_model, c.request_model) IS NOT NULL))[1] AS model,
    (array_agg(c.producer ORDER BY c.side_call IS NOT NULL, c.start_ns, c.span_id))[1] AS producer,
    max(c.agent_version) AS agent_version
  FROM public.llm_calls c
  GROUP BY c.workspace_id, c.conversation_id
)
SELECT
  conv.workspace_id::text                                                        AS workspace_id,
  conv.conversation_id::text                                                     AS conversation_id,
  to_timestamp(conv.first_ns / 1e9)::timestamptz                                 AS first_call_at,
  (to_timestamp(conv.first_ns / 1e9) AT TIME ZONE 'UTC')::date                   AS day,
  date_trunc('week', to_timestamp(conv.first_ns / 1e9) AT TIME ZONE 'UTC')::date AS week,
  conv.model::text                                                               AS model,
  conv.producer::text                                                            AS producer,
  conv.agent_version::text                                                       AS agent_version,
  p.project::text                                                                AS project,
  conv.calls::bigint                                                             AS calls,
  conv.costed_calls::bigint                                                      AS costed_calls,
  conv.cost_usd::double precision                                                AS cost_usd,
  COALESCE(conv.tokens_over_threshold, 0)::bigint                                AS tokens_over_threshold,
  COALESCE(f.context_too_full, 0)::bigint                                        AS context_too_full,
  COALESCE(f.tool_takeover, 0)::bigint                                           AS tool_takeover,
  COALESCE(f.history_lost, 0)::bigint                                            AS history_lost,
  COALESCE(f.output_cut_off, 0)::bigint                                          AS output_cut_off
FROM conv
LEFT JOIN public.conversations p
  ON p.workspace_id = conv.workspace_id AND p.id = conv.conversation_id
LEFT JOIN (
  SELECT workspace_id, conversation_id,
         count(*) FILTER (WHERE detector = 'context_too_full') AS context_too_full,
         count(*) FILTER (WHERE detector = 'tool_takeover')    AS tool_takeover,
         count(*) FILTER (WHERE detector = 'history_lost')     AS history_lost,
         count(*) FILTER (WHERE detector = 'output_cut_off')   AS output_cut_off
    FROM public.findings
   GROUP BY workspace_id, conversation_id
) f ON f.workspace_id = conv.workspace_id AND f.conversation_id = conv.conversation_id;
COMMENT ON VIEW reporting_v1.conversation_trends IS
  'One row per conversation, dated by its first call (day, ISO week), with its calls, reported cost (null when no call reported one), tokens sent in calls at or above the usage threshold, and findings per detector: what GET /api/trends sums.';

CREATE VIEW reporting_v1.trends_daily AS
SELECT
  t.day::date                                    AS day,
  t.workspace_id::text                           AS workspace_id,
  t.model::text                                  AS model,
  t.project::text                                AS project,
  count(*)::bigint                               AS conversations,
  sum(t.calls)::bigint                           AS calls,
  sum(t.cost_usd)::double precision              AS cost_usd,
  sum(t.tokens_over_threshold)::bigint           AS tokens_over_threshold,
  sum(t.context_too_full)::bigint                AS context_too_full,
  sum(t.tool_takeover)::bigint                   AS tool_takeover,
  sum(t.history_lost)::bigint                    AS history_lost,
  sum(t.output_cut_off)::bigint                  AS output_cut_off
FROM reporting_v1.conversation_trends t
GROUP BY 1, 2, 3, 4;
COMMENT ON VIEW reporting_v1.trends_daily IS
  'Conversations per UTC day of their first call, workspace, model and project, with their calls, reported cost (null when none), tokens over the usage threshold and findings per detector. Findings per 100 conversations = 100 * findings / conversations.';
