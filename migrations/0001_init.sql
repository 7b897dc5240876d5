-- rotscope schema, version 1. Every row carries workspace_id; table names are an interface
-- (DESIGN §3): reports and checks query them directly.

CREATE TABLE workspaces (
  id              text PRIMARY KEY,
  capture_content boolean NOT NULL DEFAULT true,
  created_at      timestamptz NOT NULL DEFAULT now()
);

INSERT INTO workspaces (id) VALUES ('default');

CREATE TABLE api_tokens (
  id           bigserial PRIMARY KEY,
  workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  scope        text NOT NULL CHECK (scope IN ('ingest', 'read', 'admin')),
  -- sha256 of the token, hex; the token itself is shown once and never stored
  token_hash   text NOT NULL UNIQUE,
  -- the first characters of the token, to tell tokens apart in listings
  prefix       text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  revoked_at   timestamptz
);

-- Raw spans of GenAI interest, as received (attributes, events and resource as JSON).
CREATE TABLE spans (
  workspace_id   text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  trace_id       text NOT NULL,
  span_id        text NOT NULL,
  parent_span_id text,
  name           text NOT NULL,
  kind           smallint NOT NULL DEFAULT 0,
  start_ns       bigint NOT NULL,
  end_ns         bigint NOT NULL,
  status_code    smallint NOT NULL DEFAULT 0,
  status_message text NOT NULL DEFAULT '',
  scope_name     text NOT NULL DEFAULT '',
  scope_version  text NOT NULL DEFAULT '',
  attributes     jsonb NOT NULL DEFAULT '{}',
  events         jsonb NOT NULL DEFAULT '[]',
  links          jsonb NOT NULL DEFAULT '[]',
  resource       jsonb NOT NULL DEFAULT '{}',
  -- role decided by the normalizer (llm_call, tool, agent_step, compaction, other); null until then
  role           text,
  received_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, trace_id, span_id)
);
CREATE INDEX spans_received_idx ON spans (workspace_id, received_at);

-- Raw log records (Claude Code events and GenAI content logs). dedupe_key makes re-sent batches idempotent.
CREATE TABLE log_records (
  id              bigserial PRIMARY KEY,
  workspace_id    text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  dedupe_key      text NOT NULL,
  time_ns         bigint NOT NULL,
  observed_ns     bigint NOT NULL,
  event_name      text NOT NULL DEFAULT '',
  severity_number smallint NOT NULL DEFAULT 0,
  severity_text   text NOT NULL DEFAULT '',
  trace_id        text,
  span_id         text,
  body            jsonb,
  attributes      jsonb NOT NULL DEFAULT '{}',
  resource        jsonb NOT NULL DEFAULT '{}',
  scope_name      text NOT NULL DEFAULT '',
  received_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, dedupe_key)
);
CREATE INDEX log_records_trace_idx ON log_records (workspace_id, trace_id, span_id);

-- One row per finished LLM call (normalized; see src/model/calls.ts for the meaning of each column).
CREATE TABLE llm_calls (
  workspace_id          text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  trace_id              text NOT NULL,
  span_id               text NOT NULL,
  parent_span_id        text,
  conversation_id       text NOT NULL,
  conversation_synthetic boolean NOT NULL DEFAULT false,
  agent_id              text,
  stream_key            text NOT NULL,
  run_id                text NOT NULL,
  side_call             text,
  -- the provider's request id (Claude Code request_id), to correlate log events with spans
  request_id            text,
  start_ns              bigint NOT NULL,
  end_ns                bigint NOT NULL,
  producer              text NOT NULL,
  provider              text,
  request_model         text,
  response_model        text,
  input_tokens_raw      integer,
  cache_read_tokens     integer,
  cache_write_tokens    integer,
  output_tokens         integer,
  context_tokens        integer,
  usage_rule            text,
  context_window        integer,
  window_source         text,
  finish_reason_raw     text,
  finish_class          text,
  output_tool_call      boolean NOT NULL DEFAULT false,
  output_tool_name      text,
  max_output_tokens     integer,
  parts                 jsonb,
  compacted             boolean NOT NULL DEFAULT false,
  created_at            timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, trace_id, span_id)
);
CREATE INDEX llm_calls_conversation_idx ON llm_calls (workspace_id, conversation_id, start_ns, span_id);
CREATE INDEX llm_calls_run_idx ON llm_calls (workspace_id, run_id);
CREATE INDEX llm_calls_request_idx ON llm_calls (workspace_id, request_id) WHERE request_id IS NOT NULL;

CREATE TABLE tool_results (
  workspace_id    text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  trace_id        text NOT NULL,
  span_id         text NOT NULL,
  conversation_id text NOT NULL,
  stream_key      text NOT NULL,
  tool_name       text NOT NULL,
  tool_call_id    text,
  result_size     integer,
  size_unit       text NOT NULL,
  at_ns           bigint NOT NULL,
  source          text NOT NULL,
  PRIMARY KEY (workspace_id, trace_id, span_id)
);
CREATE INDEX tool_results_conversation_idx ON tool_results (workspace_id, conversation_id, at_ns);

CREATE TABLE compactions (
  id              bigserial PRIMARY KEY,
  workspace_id    text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  source_key      text NOT NULL,
  conversation_id text NOT NULL,
  stream_key      text NOT NULL,
  run_id          text NOT NULL,
  trace_id        text,
  span_id         text,
  at_ns           bigint NOT NULL,
  evidence        text NOT NULL,
  kind            text NOT NULL,
  trigger         text,
  tokens_before   integer,
  tokens_after    integer,
  messages_kept   integer,
  summary_size    integer,
  summary         text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, source_key)
);
CREATE INDEX compactions_conversation_idx ON compactions (workspace_id, conversation_id, at_ns);

-- Evaluation state per conversation: what has been evaluated, and the detectors' running state.
CREATE TABLE conversations (
  workspace_id       text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  id                 text NOT NULL,
  first_seen_at      timestamptz NOT NULL DEFAULT now(),
  last_ingest_at     timestamptz NOT NULL DEFAULT now(),
  -- set when new calls or compactions arrived and are not evaluated yet
  dirty              boolean NOT NULL DEFAULT true,
  -- the earliest start of anything that arrived since the last evaluation
  pending_from_ns    bigint,
  -- the position evaluation has reached: (start_ns, span_id) of the last evaluated call
  evaluated_ns       bigint,
  evaluated_span_id  text,
  state              jsonb,
  call_count         integer NOT NULL DEFAULT 0,
  updated_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, id)
);
CREATE INDEX conversations_dirty_idx ON conversations (last_ingest_at) WHERE dirty;

CREATE TABLE findings (
  id              bigserial PRIMARY KEY,
  workspace_id    text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  detector        text NOT NULL,
  anchor          text NOT NULL,
  severity        text NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
  kind            text,
  conversation_id text NOT NULL,
  stream_key      text NOT NULL,
  run_id          text NOT NULL,
  trace_id        text NOT NULL,
  span_id         text NOT NULL,
  model           text,
  summary         text NOT NULL,
  details         jsonb NOT NULL DEFAULT '{}',
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, detector, anchor)
);
CREATE INDEX findings_created_idx ON findings (workspace_id, created_at DESC, id DESC);
CREATE INDEX findings_conversation_idx ON findings (workspace_id, conversation_id);

CREATE TABLE alert_settings (
  workspace_id     text PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
  enabled          boolean NOT NULL DEFAULT true,
  thresholds       jsonb NOT NULL DEFAULT '{}',
  window_overrides jsonb NOT NULL DEFAULT '[]',
  updated_at       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE channels (
  id           bigserial PRIMARY KEY,
  workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  type         text NOT NULL CHECK (type IN ('webhook', 'slack', 'email')),
  name         text NOT NULL,
  -- public configuration (returned by the API)
  config       jsonb NOT NULL DEFAULT '{}',
  -- secrets (signing secret, SMTP password, Slack URL): write-only, never returned
  secrets      jsonb NOT NULL DEFAULT '{}',
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE alert_channels (
  workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  channel_id   bigint NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
  min_severity text NOT NULL DEFAULT 'warning' CHECK (min_severity IN ('info', 'warning', 'critical')),
  PRIMARY KEY (workspace_id, channel_id)
);

-- The outbox: one row per (finding event, channel), written in the finding's transaction.
CREATE TABLE deliveries (
  id              text PRIMARY KEY,
  workspace_id    text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  finding_id      bigint NOT NULL REFERENCES findings (id) ON DELETE CASCADE,
  channel_id      bigint NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
  -- 'created' or 'escalated'
  event           text NOT NULL,
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed', 'dead')),
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  delivered_at    timestamptz,
  UNIQUE (finding_id, channel_id, event)
);
CREATE INDEX deliveries_due_idx ON deliveries (next_attempt_at) WHERE status = 'pending';

CREATE TABLE delivery_attempts (
  id          bigserial PRIMARY KEY,
  delivery_id text NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  at          timestamptz NOT NULL DEFAULT now(),
  status_code integer,
  error       text,
  duration_ms integer NOT NULL,
  outcome     text NOT NULL
);
CREATE INDEX delivery_attempts_delivery_idx ON delivery_attempts (delivery_id, at);
