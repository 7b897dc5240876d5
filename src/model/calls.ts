/**
 * The normalized model every detector reads: LLM calls, tool results and compactions,
 * whatever producer sent them (DESIGN §5, conventions.md §9).
 */
import type { AgentCompactionEvidence } from './agents/index.ts';

/** What a span is, decided first; everything else depends on it (conventions §9.1). */
export type SpanRole = 'llm_call' | 'tool' | 'agent_step' | 'compaction' | 'other';

/** Finish reasons classed (conventions §9.4). The raw value is always kept beside it. */
export type FinishClass =
  | 'context_overflow'
  | 'output_limit'
  | 'tool_call'
  | 'stop'
  | 'paused'
  | 'refusal'
  | 'compaction'
  | 'error'
  | 'other';

/**
 * How `contextTokens` was computed from the raw readings (conventions §9.3):
 * - `exclusive_producer`: the producer is known to exclude cache (Claude Code, transcripts), raw + cache;
 * - `exclusive_inferred`: raw < cache read + write, so raw must exclude cache, raw + cache;
 * - `inclusive_attribute`: the attribute is defined to include cache and the producer was measured
 *   to follow it (Claude Code ≥ 2.1.3xx `gen_ai.usage.input_tokens`), raw as is;
 * - `inclusive`: raw taken as including cache (semconv ≥1.40); may under-count when cache is small;
 * - `no_cache`: no cache readings at all, raw as is.
 */
export type UsageRule =
  'exclusive_producer' | 'exclusive_inferred' | 'inclusive_attribute' | 'inclusive' | 'no_cache';

/**
 * Where a call's context window number came from (src/ingest/windows.ts, in precedence order):
 * - `override`: a workspace window override;
 * - `model_id`: the model id names it (`[1m]`, `-1m`);
 * - `agent`: the agent reports the call's window itself (Codex's `model_context_window` in
 *   its session files, Qwen Code's `window_size_tokens`, Copilot CLI's `token_limit`, Claude
 *   Code's status line and the Agent SDK's `contextWindow` through {@link ReportedWindow});
 * - `inferred`: usage above the window otherwise known, moved to the next size of the family;
 * - `compaction`: the agent auto-compacted where a 200k window does (Claude Code near 167k
 *   tokens); set by the `context_too_full` detector on what it judges, never stored on a call;
 * - `catalog`: the built-in catalog (src/model/window-catalog.ts), for the agent's version;
 * - `assumed`: the model id cannot settle it and the catalog assumes the runtime's default.
 * null with a null window: no rule knows the model (not judged by `context_too_full`).
 */
export type WindowSource =
  'override' | 'model_id' | 'agent' | 'inferred' | 'compaction' | 'catalog' | 'assumed';

/**
 * Sizes of the parts of one call's input. All sizes share `unit`. Tool shares are
 * `tools[name] / total`; when `total` is null and the unit is tokens, use the call's
 * `contextTokens` as the total.
 */
export interface InputParts {
  unit: 'chars' | 'tokens';
  /** Size of the whole input (system + all messages), null when unknown. */
  total: number | null;
  /** System prompt size, null when the producer does not say. 0 means present and empty. */
  system: number | null;
  /** Total size of each tool's results present in this call's input, by tool name. */
  tools: Record<string, number>;
  /** Where the sizes came from: message content, tool spans/events, or an estimate. */
  source: 'messages' | 'tool_spans' | 'estimated';
  /**
   * Set when the sizes are tokens estimated from byte or character counts (4 to a token), e.g.
   * Claude Code's `tool_result_size_bytes` and `system_prompt_length`.
   */
  estimatedFrom?: 'bytes';
}

/** One finished LLM call (a model request), as the detectors see it. */
export interface LlmCall {
  workspaceId: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  /** The conversation key (gen_ai.conversation.id, session.id, ...; else the trace id). */
  conversationId: string;
  /** True when conversationId fell back to the trace id (nothing better was sent). */
  conversationSynthetic: boolean;
  /** Sub-agent identity; null on the main thread. */
  agentId: string | null;
  /** conversationId + agent identity: calls of one stream follow each other. */
  streamKey: string;
  /** The run: the trace id, or the session for producers with one trace per prompt. */
  runId: string;
  /** Set (to the reason, e.g. `compact`, `title`) when the call is a side call that never counts as the stream's next call. */
  sideCall: string | null;
  /** The provider's request id when known (Claude Code `request_id`), to correlate log events. */
  requestId: string | null;
  /** Unix nanoseconds as decimal strings. */
  startNs: string;
  endNs: string;
  /** Which producer convention matched, e.g. `semconv`, `openinference`, `claude_code`. */
  producer: string;
  provider: string | null;
  requestModel: string | null;
  responseModel: string | null;
  inputTokensRaw: number | null;
  cacheReadTokens: number | null;
  cacheWriteTokens: number | null;
  outputTokens: number | null;
  /** Everything sent: fresh input + cache reads + cache writes. null when no token counts. */
  contextTokens: number | null;
  usageRule: UsageRule | null;
  contextWindow: number | null;
  windowSource: WindowSource | null;
  /**
   * The version of the agent that made the call, where rotscope reads the agent by name
   * (Claude Code: `service.version` of its spans and log events, a transcript line's
   * `version`); null otherwise. Decides the catalog rows bound to agent versions.
   */
  agentVersion: string | null;
  finishReasonRaw: string | null;
  finishClass: FinishClass | null;
  /** The output contained a tool call; null when the producer does not say (plain Claude Code spans). */
  outputToolCall: boolean | null;
  /** Name of the (last) tool called in the output, when known. */
  outputToolName: string | null;
  /** Requested output limit (max_tokens), when known. */
  maxOutputTokens: number | null;
  parts: InputParts | null;
  /** The call carried a compaction marker itself (gen_ai.conversation.compacted, a compaction part or event). */
  compacted: boolean;
  /**
   * The attributes of the call's span that hold its input messages and system instructions as
   * sent (content captured only), for What was lost; absent when there were none. Written,
   * never read back with the call (src/store/drop-rows.ts reads it).
   */
  inputMessages?: Readonly<Record<string, unknown>>;
  /**
   * What the producer said the call cost, in US dollars (Claude Code's `cost_usd` on its
   * `api_request` log event); absent or null when it did not say. rotscope never prices a call.
   */
  costUsd?: number | null;
}

/** One tool execution's result. */
export interface ToolResult {
  workspaceId: string;
  traceId: string;
  spanId: string;
  conversationId: string;
  streamKey: string;
  toolName: string;
  toolCallId: string | null;
  /** Result size, in `sizeUnit`. */
  resultSize: number | null;
  sizeUnit: 'chars' | 'bytes' | 'tokens';
  atNs: string;
  source: string;
}

export type CompactionEvidence =
  | 'span'
  | 'span_event'
  | 'flag'
  | 'message_part'
  | 'finish_reason'
  // each agent's own markers: the keys of its profile's `compactionEvidence` (./agents/)
  | AgentCompactionEvidence;

/** A compaction (or other deliberate shrinking) of a conversation stream's history. */
export interface Compaction {
  workspaceId: string;
  conversationId: string;
  streamKey: string;
  runId: string;
  traceId: string | null;
  spanId: string | null;
  /** When it happened (Unix ns, decimal string). */
  atNs: string;
  evidence: CompactionEvidence;
  kind: 'summarize' | 'clear_tool_results' | 'truncate' | 'other';
  trigger: 'auto' | 'manual' | null;
  tokensBefore: number | null;
  tokensAfter: number | null;
  messagesKept: number | null;
  summarySize: number | null;
  /** Summary text, only when the workspace captures content. */
  summary: string | null;
  /** Unique per workspace: makes re-sent compactions idempotent. */
  sourceKey: string;
}

/** Everything one batch of spans or logs normalized into. */
export interface Normalized {
  calls: LlmCall[];
  toolResults: ToolResult[];
  compactions: Compaction[];
  /** Where conversations ran, when the producer says (absent or empty when it does not). */
  projects?: ConversationProject[];
}

/**
 * The project a conversation works in: its working directory (`process.working_directory`, a
 * transcript line's `cwd`) or its repository (`vcs.repository.url.full`, a Codex session's git
 * remote). The latest report wins (`atNs`), so a session that moved shows where it is now.
 */
export interface ConversationProject {
  conversationId: string;
  project: string;
  /** When the producer reported it (Unix ns, decimal). */
  atNs: string;
}

/**
 * A context window an agent reported for a conversation's calls of one model, apart from the
 * calls (Claude Code's status line through rotscope's hooks, the Agent SDK's result message
 * through @rotscope/sdk): stored, and given to the conversation's calls of that model, stored
 * before or after, unless an override wins (window source `agent`; src/store/agent-windows.ts).
 */
export interface ReportedWindow {
  workspaceId: string;
  conversationId: string;
  /** The model id as the agent names it. */
  model: string;
  window: number;
  /** Who reported it (`claude_code.statusline`, `claude_agent_sdk`, ...). */
  reporter: string;
  /** When it was reported (Unix ns, decimal). */
  atNs: string;
}

/** The latest report per conversation (what the store keeps); the later of equal times. */
export function latestProjects(reports: readonly ConversationProject[]): ConversationProject[] {
  const latest = new Map<string, ConversationProject>();
  for (const report of reports) {
    const seen = latest.get(report.conversationId);
    if (seen === undefined || BigInt(report.atNs) >= BigInt(seen.atNs))
      latest.set(report.conversationId, report);
  }
  return [...latest.values()];
}

/** One step of a conversation's timeline, in start-time order: a finished call or a compaction. */
export type TimelineItem =
  { type: 'call'; call: LlmCall } | { type: 'compaction'; compaction: Compaction };

/** What the content logs of one call say about it (applied where the span did not say it). */
export interface CallContent {
  traceId: string;
  spanId: string;
  /** Parts from the logged messages; null when no message content was captured. */
  parts: InputParts | null;
  outputToolCall: boolean;
  outputToolName: string | null;
  finishReasonRaw: string | null;
  /** `finishReasonRaw` classed (conventions.md §9.4). */
  finishClass: FinishClass | null;
}
