/**
 * Kysely table types for the rotscope schema (migrations/). Snake-case rows never leave
 * src/store: queries map them to the camelCase models in src/model. Every table of the migrated
 * schema (./schema.sql, `npm run schema:dump`) is here with its columns:
 * test/integration/store/schema-dump.test.ts fails when they drift apart.
 * int8 columns (bigint, bigserial, count) are read as decimal strings on both backends.
 */
import type { ColumnType } from 'kysely';

type Json = unknown;
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Int8 = ColumnType<string, string | number | bigint, string | number | bigint>;
type GeneratedInt8 = ColumnType<string, string | number | bigint | undefined, never>;
/**
 * A token count in a bigint column (migration 0050): read as a decimal string like every int8
 * (src/store/db.ts), written as a number (ingest refuses counts past 2^53). Read it with
 * `countOf` (src/store/columns.ts).
 */
type Int8Count = ColumnType<string | null, number | null, number | null>;
type JsonColumn = ColumnType<Json, string, string>;
type JsonColumnOpt = ColumnType<Json, string | undefined, string>;

export interface WorkspacesTable {
  id: string;
  capture_content: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: Timestamp;
}

export interface ApiTokensTable {
  id: GeneratedInt8;
  workspace_id: string;
  scope: 'ingest' | 'read' | 'admin';
  token_hash: string;
  prefix: string;
  name: ColumnType<string, string | undefined, string>;
  created_at: Timestamp;
  revoked_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface SpansTable {
  workspace_id: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: number;
  start_ns: Int8;
  end_ns: Int8;
  status_code: number;
  status_message: string;
  scope_name: string;
  scope_version: string;
  attributes: JsonColumn;
  events: JsonColumn;
  links: JsonColumn;
  resource: JsonColumn;
  role: string | null;
  received_at: Timestamp;
}

export interface LogRecordsTable {
  id: GeneratedInt8;
  workspace_id: string;
  dedupe_key: string;
  time_ns: Int8;
  observed_ns: Int8;
  event_name: string;
  severity_number: number;
  severity_text: string;
  trace_id: string | null;
  span_id: string | null;
  body: ColumnType<Json, string | null, string | null>;
  attributes: JsonColumn;
  resource: JsonColumn;
  scope_name: string;
  received_at: Timestamp;
}

export interface LlmCallsTable {
  workspace_id: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  conversation_id: string;
  conversation_synthetic: boolean;
  agent_id: string | null;
  stream_key: string;
  run_id: string;
  side_call: string | null;
  request_id: string | null;
  start_ns: Int8;
  end_ns: Int8;
  producer: string;
  provider: string | null;
  request_model: string | null;
  response_model: string | null;
  input_tokens_raw: Int8Count;
  cache_read_tokens: Int8Count;
  cache_write_tokens: Int8Count;
  output_tokens: Int8Count;
  context_tokens: Int8Count;
  usage_rule: string | null;
  context_window: number | null;
  window_source: string | null;
  /** Migration 0060: the agent's version (Claude Code), null for other producers. */
  agent_version: ColumnType<string | null, string | null | undefined, string | null>;
  finish_reason_raw: string | null;
  finish_class: string | null;
  output_tool_call: boolean | null;
  output_tool_name: string | null;
  max_output_tokens: Int8Count;
  parts: ColumnType<Json, string | null, string | null>;
  compacted: boolean;
  created_at: Timestamp;
  /**
   * Migration 0070: what a session-file import said of the call, when telemetry owns the row
   * (src/receiver/merge-rules.ts); null when no import contributed or the row is the import's own.
   */
  imported: ColumnType<Json, string | null | undefined, string | null>;
  /**
   * Migration 0110: the span attributes holding the call's input messages and system
   * instructions (LlmCall.inputMessages) as JSON text, for What was lost; null without captured
   * content.
   */
  input_messages: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * Migration 0150: what the producer said the call cost (US dollars; Claude Code's `cost_usd`),
   * null when it did not say. Never computed by rotscope.
   */
  cost_usd: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface ToolResultsTable {
  workspace_id: string;
  trace_id: string;
  span_id: string;
  conversation_id: string;
  stream_key: string;
  tool_name: string;
  tool_call_id: string | null;
  result_size: number | null;
  size_unit: string;
  at_ns: Int8;
  source: string;
  /** Migration 0070: when the row arrived (retention of rows dated beyond the partitions). */
  received_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface CompactionsTable {
  id: GeneratedInt8;
  workspace_id: string;
  source_key: string;
  conversation_id: string;
  stream_key: string;
  run_id: string;
  trace_id: string | null;
  span_id: string | null;
  at_ns: Int8;
  evidence: string;
  kind: string;
  trigger: string | null;
  tokens_before: Int8Count;
  tokens_after: Int8Count;
  messages_kept: number | null;
  summary_size: number | null;
  summary: string | null;
  created_at: Timestamp;
  /** Migration 0070: every source of the compaction, best first (src/receiver/merge-rules.ts). */
  sources: ColumnType<Json, string | undefined, string>;
}

export interface ConversationsTable {
  workspace_id: string;
  id: string;
  first_seen_at: Timestamp;
  last_ingest_at: Timestamp;
  dirty: ColumnType<boolean, boolean | undefined, boolean>;
  pending_from_ns: ColumnType<
    string | null,
    string | number | bigint | null,
    string | number | bigint | null
  >;
  evaluated_ns: ColumnType<
    string | null,
    string | number | bigint | null,
    string | number | bigint | null
  >;
  evaluated_span_id: string | null;
  state: ColumnType<Json, string | null | undefined, string | null>;
  call_count: ColumnType<number, number | undefined, number>;
  updated_at: Timestamp;
  /** Added by 0002_evaluator.sql: consecutive failed evaluations. */
  eval_failures: ColumnType<number, number | undefined, number>;
  /** Added by 0002_evaluator.sql: not claimed again before this time. */
  eval_retry_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** Added by 0002_evaluator.sql: the last failure, for operators. */
  eval_error: ColumnType<string | null, string | null | undefined, string | null>;
  /** Added by 0004_evaluator_max_wait.sql: when the conversation last became dirty; null when clean. */
  dirty_since: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  settle_ms: ColumnType<number, number | undefined, number>;
  /**
   * Migration 0070: the start (Unix ns) of the latest `rotscope import` that brought items of
   * this conversation; findings anchored on calls before it are history, never pushed.
   */
  history_before_ns: ColumnType<
    string | null,
    string | number | bigint | null | undefined,
    string | number | bigint | null
  >;
  /** Migration 0100: the working directory or repository the producer last reported. */
  project: ColumnType<string | null, string | null | undefined, string | null>;
  /** Migration 0100: when that report was made (Unix ns). */
  project_at_ns: ColumnType<
    string | null,
    string | number | bigint | null | undefined,
    string | number | bigint | null
  >;
  /**
   * Migration 0140: the furthest call (start, Unix ns) any evaluation has fed; a call at or
   * before it was judged before (its findings are late). Null before: `evaluated_ns` stands in.
   */
  judged_ns: ColumnType<
    string | null,
    string | number | bigint | null | undefined,
    string | number | bigint | null
  >;
  /**
   * Migration 0170: a random token written with every saved position and state; an evaluator
   * whose copy of the state carries it need not read `state`. Null before the first such save.
   */
  state_token: ColumnType<
    string | null,
    string | number | bigint | null | undefined,
    string | number | bigint | null
  >;
  /**
   * Migration 0190: the range of the conversation's call starts (Unix ns): every stored call
   * starts within it. Both null: unknown. From after to: no call yet.
   */
  calls_from_ns: ColumnType<
    string | null,
    string | number | bigint | null | undefined,
    string | number | bigint | null
  >;
  calls_to_ns: ColumnType<
    string | null,
    string | number | bigint | null | undefined,
    string | number | bigint | null
  >;
  /**
   * Migration 0190: the `last_ingest_at` the range was kept with; another value (an earlier
   * version's write during an upgrade) makes the range unknown.
   */
  calls_noted_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /**
   * Migration 0210: the token of the conversation's calls an evaluator holds in memory
   * (src/store/call-memo.ts); null when none does.
   */
  calls_token: ColumnType<
    string | null,
    string | number | bigint | null | undefined,
    string | number | bigint | null
  >;
}

/** Added by 0002_evaluator.sql: detector state saved at a call position, for replays. */
export interface EvaluationCheckpointsTable {
  workspace_id: string;
  conversation_id: string;
  at_ns: Int8;
  at_span_id: string;
  state: JsonColumn;
  created_at: Timestamp;
}

export interface FindingsTable {
  id: GeneratedInt8;
  workspace_id: string;
  detector: string;
  anchor: string;
  severity: 'info' | 'warning' | 'critical';
  kind: string | null;
  conversation_id: string;
  stream_key: string;
  run_id: string;
  trace_id: string;
  span_id: string;
  model: string | null;
  summary: string;
  details: JsonColumn;
  created_at: Timestamp;
  updated_at: Timestamp;
  /**
   * Migration 0140: created when calls already evaluated were judged again (a window or a call
   * that arrived later); never changed after.
   */
  late: ColumnType<boolean, boolean | undefined, boolean>;
  /** Migration 0160: when someone acknowledged it (POST /api/findings/:id/acknowledge); null until. */
  acknowledged_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** Migration 0160: what they wrote when they did; null until. */
  acknowledged_note: ColumnType<string | null, string | null | undefined, string | null>;
}

/** Migration 0160: what stops a finding from being sent (src/store/mutes.ts). */
export interface MutesTable {
  id: GeneratedInt8;
  workspace_id: string;
  detector: string | null;
  project: string | null;
  model: string | null;
  until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  note: string | null;
  created_at: Timestamp;
}

export interface AlertSettingsTable {
  workspace_id: string;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  thresholds: JsonColumnOpt;
  window_overrides: JsonColumnOpt;
  updated_at: Timestamp;
}

export interface ChannelsTable {
  id: GeneratedInt8;
  workspace_id: string;
  type: 'webhook' | 'slack' | 'email';
  name: string;
  config: JsonColumn;
  /** Plaintext secrets of rows written before migration 0020 ('{}' once sealed). */
  secrets: JsonColumnOpt;
  /** The secrets sealed (src/secrets/keyring.ts), and the id of the key that sealed them. */
  secrets_sealed: ColumnType<Buffer | null, Buffer | null | undefined, Buffer | null>;
  secrets_key_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AlertChannelsTable {
  workspace_id: string;
  channel_id: Int8;
  min_severity: 'info' | 'warning' | 'critical';
}

export interface DeliveriesTable {
  id: string;
  workspace_id: string;
  /** The finding announced; null for a window notice (migration 0120: one of the two is set). */
  finding_id: ColumnType<string | null, string | number | bigint | null | undefined, never>;
  /** Migration 0120: the `window_notices` row announced; null for a finding. */
  notice_id: ColumnType<string | null, string | number | bigint | null | undefined, never>;
  channel_id: Int8;
  /** `created` or `escalated` for a finding, `window.unknown` for a window notice. */
  event: string;
  /** `muted` (migration 0160): held back by a mute, never sent. */
  status: ColumnType<
    'pending' | 'delivered' | 'failed' | 'dead' | 'muted',
    'pending' | 'delivered' | 'failed' | 'dead' | 'muted' | undefined,
    'pending' | 'delivered' | 'failed' | 'dead' | 'muted'
  >;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Timestamp;
  last_error: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  delivered_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** Migration 0160: the mute that held it back; null when none did (or it was deleted). */
  mute_id: ColumnType<string | null, string | number | bigint | null | undefined, never>;
}

export interface DeliveryAttemptsTable {
  id: GeneratedInt8;
  delivery_id: string;
  at: Timestamp;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  outcome: string;
}

/**
 * Migration 0120: a model whose calls went unjudged for lack of a window, announced once per
 * workspace while `known_at` is null (src/store/window-notices.ts).
 */
export interface WindowNoticesTable {
  id: GeneratedInt8;
  workspace_id: string;
  model: string;
  calls: number;
  conversations: number;
  conversation_id: string;
  created_at: Timestamp;
  known_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

/** Migration 0080: requests refused for their token, counted (src/store/refusals.ts). */
export interface AuthRefusalsTable {
  /** '' when no token told the workspace. */
  workspace_id: string;
  status: number;
  route: string;
  reason: string;
  agent: string;
  count: ColumnType<string, string | number | bigint, string | number | bigint>;
  first_seen: Timestamp;
  last_seen: Timestamp;
}

export interface SchemaMigrationsTable {
  version: number;
  name: string;
  applied_at: Timestamp;
}

/** Migration 0090: the Claude Code tool-result guard's decisions (src/store/guard-decisions.ts). */
export interface GuardDecisionsTable {
  workspace_id: string;
  conversation_id: string;
  span_id: string;
  at_ns: Int8;
  action: string;
  tool: string;
  result_tokens: Int8;
  budget_tokens: Int8;
  kept_out_tokens: Int8;
  received_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/**
 * Migration 0130: the window the agent itself reported, per conversation and model, the latest
 * report (src/store/agent-windows.ts).
 */
export interface AgentWindowsTable {
  workspace_id: string;
  conversation_id: string;
  model: string;
  window_tokens: number;
  reporter: string;
  reported_at_ns: Int8;
}

export interface Database {
  workspaces: WorkspacesTable;
  api_tokens: ApiTokensTable;
  spans: SpansTable;
  log_records: LogRecordsTable;
  llm_calls: LlmCallsTable;
  tool_results: ToolResultsTable;
  compactions: CompactionsTable;
  conversations: ConversationsTable;
  evaluation_checkpoints: EvaluationCheckpointsTable;
  findings: FindingsTable;
  mutes: MutesTable;
  alert_settings: AlertSettingsTable;
  channels: ChannelsTable;
  alert_channels: AlertChannelsTable;
  deliveries: DeliveriesTable;
  window_notices: WindowNoticesTable;
  delivery_attempts: DeliveryAttemptsTable;
  auth_refusals: AuthRefusalsTable;
  guard_decisions: GuardDecisionsTable;
  agent_windows: AgentWindowsTable;
  schema_migrations: SchemaMigrationsTable;
}
