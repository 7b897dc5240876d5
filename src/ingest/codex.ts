/**
 * Codex CLI telemetry (conventions §5.0.2, measured on 0.171.0): its spans and log events →
 * LLM calls, tool results and compactions. Codex exports about 400 internal spans per turn (one
 * trace per turn); only these matter, the rest are counted and dropped:
 * - the call: the `handle_responses` span of the `completed` event, the one with
 *   `gen_ai.usage.*` (its `input_tokens` includes the cache, measured). The span carries neither
 *   model nor conversation: both come from its ancestors (`try_run_sampling_request` has `model`,
 *   `run_turn` has `conversation.id`), else from any span or span event of the same trace in the
 *   batch (every Codex event carries `conversation.id` and `model`; one trace is one turn). No
 *   finish reason anywhere: a cut-off is only in the session files (./codex-sessions.ts).
 * - tool results: the `codex.tool_result` span event and log event, one row per `call_id`
 *   (both spellings give the same key), sized as what the model got (see `modelSizeOfResult`),
 *   joined to the next call of the conversation by the receiver (src/receiver/logged-tool-parts.ts).
 * - compactions: `codex.compaction` (under `run_auto_compact` when automatic: trigger `auto`);
 *   one compaction per turn and position, whichever spans of it arrive. `run_pre_sampling_compact`
 *   runs before every sampling request and is not a compaction.
 * Conversations are Codex's `conversation.id` (the thread, kept by `codex exec resume`); the run
 * is the conversation, as for Claude Code (one trace per turn). Calls carry a request identity
 * the session files can rebuild (`codexRequestId`).
 */
import { codex } from '../model/agents/codex.ts';
import { recognizesResource } from '../model/agents/index.ts';
import type { Compaction, LlmCall, Normalized, SpanRole, ToolResult } from '../model/calls.ts';
import { setAttribute, type Attributes, type LogRecord, type Span } from '../model/telemetry.ts';
import { bool, cmpNs, isoToNs, num, str } from './attrs.ts';
import { compaction } from './compactions.ts';
import { stripAttributes, stripEvents } from './content.ts';
import { streamKeyOf } from './conversation.ts';
import { spanIdFor } from './ids.ts';
import { readRawUsage, type Usage } from './tokens.ts';
import type { NormalizeContext } from './types.ts';
import { contextWindowFor } from './windows.ts';

/** The producer of calls read from Codex telemetry. */
export const CODEX_PRODUCER = codex.recognize.producer;
/** The source of tool results read from Codex telemetry (span events and logs alike). */
export const CODEX_TOOL_RESULT_SOURCE = 'codex';

/**
 * Bytes of a truncated tool output that reach the model: Codex 0.171.0 cuts tool output to its
 * truncation policy, 10,000 tokens for every model of its catalog, counted as 4 bytes a token
 * (measured: a 400,106-byte `cat` result, `output_truncated: true`, reached the model as
 * 40,214 characters; the log's preview says "Original token count: 100000", the size before).
 */
export const CODEX_TRUNCATED_OUTPUT_BYTES = 40_000;

/** True for a span or log record of Codex (its `service.name` is `codex_exec`, `codex_cli_rs`, ...). */
export function isCodexResource(resource: Attributes): boolean {
  return recognizesResource(codex.recognize, resource);
}

/**
 * What a call's request is known by in every Codex source (telemetry and session files): the
 * turn's trace id and the response's token counts. Within one turn every request sends more
 * than the one before (or, after a compaction, different numbers), so two requests of a turn do
 * not share them; Codex's telemetry carries no response id to use instead.
 */
export function codexRequestId(
  traceId: string,
  inputTokens: number,
  cachedTokens: number | null,
  outputTokens: number | null,
): string {
  return `codex:${traceId}:${inputTokens}:${cachedTokens ?? 0}:${outputTokens ?? 0}`;
}

/** The key of the n-th (1-based) compaction of a turn, the same from telemetry and session files. */
export function codexCompactionKey(conversationId: string, turnId: string, n: number): string {
  return `codex:compaction:${conversationId}:${turnId}:${n}`;
}

/** The row key of one tool result (the same from the span event and the log event). */
export function codexToolResultSpanId(conversationId: string, callId: string): string {
  return spanIdFor(`codex.tool_result:${conversationId}:${callId}`);
}

/** Bytes of a tool output as the model got it: the raw length, or the truncation budget when Codex cut it. */
export function modelSizeOfResult(outputLength: number | null, truncated: boolean): number | null {
  if (outputLength === null) return null;
  return truncated ? Math.min(outputLength, CODEX_TRUNCATED_OUTPUT_BYTES) : outputLength;
}

/**
 * Codex's usage: `gen_ai.usage.input_tokens` includes the cache (measured on 0.171.0: the
 * Responses API's `input_tokens`, `cached_tokens` a part of it).
 */
export function codexUsage(
  input: number | null,
  cacheRead: number | null,
  cacheWrite: number | null,
  output: number | null,
): Usage {
  return {
    inputTokensRaw: input,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    outputTokens: output,
    contextTokens: input,
    usageRule: input === null ? null : 'inclusive_attribute',
  };
}

/** The result of normalizing the Codex spans of one batch. */
export interface CodexSpanBatch {
  keep: Array<Span & { role: SpanRole }>;
  dropped: number;
  normalized: Normalized;
}

/** Per trace (one Codex turn) of the batch: the conversation and model any of its spans names. */
interface TraceFacts {
  conversationId: string | null;
  model: string | null;
  turnId: string | null;
}

const CONVERSATION = 'conversation.id';

/** The `event.name` of a Codex span event (its OTel name is the source location). */
function codexEventName(attrs: Attributes): string | null {
  return str(attrs, 'event.name');
}

/** The event time: `event.timestamp` (ms, the same on the span event and the log), else `fallback`. */
function eventNs(attrs: Attributes, fallback: string): string {
  return isoToNs(str(attrs, 'event.timestamp')) ?? fallback;
}

function traceFactsOf(spans: readonly Span[]): Map<string, TraceFacts> {
  const facts = new Map<string, TraceFacts>();
  for (const span of spans) {
    let f = facts.get(span.traceId);
    if (f === undefined) {
      f = { conversationId: null, model: null, turnId: null };
      facts.set(span.traceId, f);
    }
    const a = span.attributes;
    f.conversationId ??= str(a, CONVERSATION);
    f.turnId ??= str(a, 'turn.id');
    // the sampling spans name the model the request used; any event names the session's
    if (f.model === null && span.name !== 'get_model_info') f.model = str(a, 'model');
    if (f.conversationId !== null && f.model !== null) continue;
    for (const e of span.events) {
      f.conversationId ??= str(e.attributes, CONVERSATION);
      f.model ??= str(e.attributes, 'model');
    }
  }
  return facts;
}

/** The first value of `key` on the span or its ancestors in the batch. */
function fromAncestors(
  span: Span,
  byId: ReadonlyMap<string, Span>,
  key: string,
  skip?: string,
): string | null {
  let cur: Span | undefined = span;
  for (let i = 0; cur !== undefined && i < 256; i++) {
    if (cur.name !== skip) {
      const v = str(cur.attributes, key);
      if (v !== null) return v;
    }
    cur = cur.parentSpanId === null ? undefined : byId.get(cur.parentSpanId);
    if (cur !== undefined && cur.traceId !== span.traceId) return null;
  }
  return null;
}

/** True when a span (or an ancestor in the batch) is a compaction's: its request is a side call. */
function underCompaction(span: Span, byId: ReadonlyMap<string, Span>): boolean {
  let cur = span.parentSpanId === null ? undefined : byId.get(span.parentSpanId);
  for (let i = 0; cur !== undefined && i < 256; i++) {
    if (cur.name === 'run_auto_compact' || cur.name === 'codex.compaction') return true;
    cur = cur.parentSpanId === null ? undefined : byId.get(cur.parentSpanId);
  }
  return false;
}

/** A `handle_responses` span of the `completed` event: the one that carries the usage. */
function isCallSpan(span: Span): boolean {
  return (
    span.name === 'handle_responses' && span.attributes['gen_ai.usage.input_tokens'] !== undefined
  );
}

/**
 * Normalizes the Codex spans of one batch (see the module doc). Pure; everything is per batch:
 * a call whose every span naming the conversation or the model arrived in another batch falls
 * back to its trace id (flagged synthetic) and to no model (its window then unknown, never guessed).
 */
export function normalizeCodexSpans(spans: readonly Span[], ctx: NormalizeContext): CodexSpanBatch {
  const byId = new Map<string, Span>();
  for (const s of spans) byId.set(s.spanId, s);
  const traces = traceFactsOf(spans);
  const keep: Array<Span & { role: SpanRole }> = [];
  const calls: LlmCall[] = [];
  const toolResults: ToolResult[] = [];
  const compactions: Compaction[] = [];
  let dropped = 0;

  const conversationOf = (span: Span) => {
    const id = fromAncestors(span, byId, CONVERSATION) ?? traces.get(span.traceId)?.conversationId;
    return id ? { id, synthetic: false } : { id: span.traceId, synthetic: true };
  };

  // compactions of a turn in start order, numbered per turn (the session files number them so)
  const compactionSpans = spans
    .filter((s) => s.name === 'codex.compaction')
    .sort((x, y) => cmpNs(x.startTimeUnixNano, y.startTimeUnixNano));
  const perTurn = new Map<string, number>();

  for (const span of compactionSpans) {
    const conv = conversationOf(span);
    const turnId =
      str(span.attributes, 'turn.id') ??
      fromAncestors(span, byId, 'turn.id') ??
      traces.get(span.traceId)?.turnId ??
      span.traceId;
    const n = (perTurn.get(`${conv.id}|${turnId}`) ?? 0) + 1;
    perTurn.set(`${conv.id}|${turnId}`, n);
    const parent = span.parentSpanId === null ? undefined : byId.get(span.parentSpanId);
    const auto = parent?.name === 'run_auto_compact';
    compactions.push(
      compaction({
        workspaceId: ctx.workspaceId,
        conversationId: conv.id,
        streamKey: streamKeyOf(conv.id, null),
        runId: conv.id,
        traceId: span.traceId,
        spanId: span.spanId,
        atNs: span.startTimeUnixNano,
        evidence: 'span',
        sourceKey: codexCompactionKey(conv.id, turnId, n),
        trigger: auto ? 'auto' : null,
      }),
    );
  }

  for (const span of spans) {
    let role: SpanRole | null = null;
    if (isCallSpan(span)) {
      role = 'llm_call';
      calls.push(buildCall(span, byId, traces, conversationOf(span), ctx));
    } else if (span.name === 'codex.compaction' || span.name === 'run_auto_compact') {
      role = 'compaction';
    }
    for (const e of span.events) {
      if (codexEventName(e.attributes) !== 'codex.tool_result') continue;
      const tr = toolResultOf(e.attributes, span.traceId, e.timeUnixNano, ctx.workspaceId);
      if (tr === null) continue;
      toolResults.push(tr);
      role ??= 'tool';
    }
    if (role === null) {
      dropped++;
      continue;
    }
    keep.push(
      ctx.captureContent
        ? { ...span, role }
        : {
            ...span,
            attributes: stripAttributes(span.attributes),
            events: span.events.length === 0 ? span.events : stripEvents(span.events),
            role,
          },
    );
  }
  return { keep, dropped, normalized: { calls, toolResults, compactions } };
}

function buildCall(
  span: Span,
  byId: ReadonlyMap<string, Span>,
  traces: ReadonlyMap<string, TraceFacts>,
  conv: { id: string; synthetic: boolean },
  ctx: NormalizeContext,
): LlmCall {
  const a = span.attributes;
  const raw = readRawUsage(a);
  const usage = codexUsage(
    raw.inputTokensRaw,
    raw.cacheReadTokens,
    raw.cacheWriteTokens,
    raw.outputTokens,
  );
  const model =
    fromAncestors(span, byId, 'model', 'get_model_info') ?? traces.get(span.traceId)?.model ?? null;
  const win = contextWindowFor(model, usage.contextTokens, ctx.windowOverrides);
  const version = str(span.resource, 'service.version');
  return {
    workspaceId: ctx.workspaceId,
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId,
    conversationId: conv.id,
    conversationSynthetic: conv.synthetic,
    agentId: null,
    streamKey: streamKeyOf(conv.id, null),
    runId: conv.id,
    sideCall: underCompaction(span, byId) ? 'compact' : null,
    requestId:
      usage.inputTokensRaw === null
        ? null
        : codexRequestId(span.traceId, usage.inputTokensRaw, raw.cacheReadTokens, raw.outputTokens),
    startNs: span.startTimeUnixNano,
    endNs: span.endTimeUnixNano,
    producer: CODEX_PRODUCER,
    provider: null,
    requestModel: model,
    responseModel: model,
    ...usage,
    contextWindow: win.window,
    windowSource: win.source,
    agentVersion: version,
    // Codex's telemetry carries no finish reason, and nothing says whether the output held a call
    finishReasonRaw: null,
    finishClass: null,
    outputToolCall: null,
    outputToolName: null,
    maxOutputTokens: null,
    parts: null,
    compacted: false,
  };
}

const PREVIEW_CUT = '[... telemetry preview truncated ...]';
const ORIGINAL_TOKENS = /Original token count: (\d+)/;

/**
 * Bytes of a tool output from the log event, which has no `output_length`, only a preview of
 * the output (about 2 KB, ending "[... telemetry preview truncated ...]" when cut) whose header
 * states the output's "Original token count". A whole preview is the output the model got; a
 * cut one stands for its header and 4 bytes a token (Codex's own estimate), within the
 * truncation budget when Codex truncated it. Measured on 0.171.0: this gives the span event's
 * number to within 3 bytes.
 */
export function loggedSizeOfResult(preview: string | null, truncated: boolean): number | null {
  if (preview === null) return null;
  if (!preview.endsWith(PREVIEW_CUT)) return modelSizeOfResult(preview.length, truncated);
  const tokens = ORIGINAL_TOKENS.exec(preview);
  if (tokens === null) return null;
  const body = preview.indexOf('Output:\n');
  const header = body < 0 ? 0 : body + 'Output:\n'.length;
  return modelSizeOfResult(header + 4 * Number(tokens[1]), truncated);
}

/** A `codex.tool_result` (span event or log event) → a tool result row, or null without a call id. */
function toolResultOf(
  a: Attributes,
  traceId: string,
  fallbackNs: string,
  workspaceId: string,
): ToolResult | null {
  const callId = str(a, 'call_id');
  const conversationId = str(a, CONVERSATION);
  if (callId === null || conversationId === null) return null;
  const truncated = bool(a, 'output_truncated') === true;
  return {
    workspaceId,
    traceId,
    spanId: codexToolResultSpanId(conversationId, callId),
    conversationId,
    streamKey: streamKeyOf(conversationId, null),
    toolName: str(a, 'tool_name') ?? 'unknown',
    toolCallId: callId,
    resultSize:
      a['output_length'] !== undefined
        ? modelSizeOfResult(num(a, 'output_length'), truncated)
        : loggedSizeOfResult(str(a, 'output'), truncated),
    sizeUnit: 'bytes',
    atNs: eventNs(a, fallbackNs),
    source: CODEX_TOOL_RESULT_SOURCE,
  };
}

/** Keys of a Codex log record that hold content (the tool's arguments and output preview, the prompt). */
const CONTENT_KEYS = new Set(['arguments', 'output', 'prompt']);

/** The result of normalizing the Codex log records of one batch. */
export interface CodexLogBatch {
  keep: LogRecord[];
  dropped: number;
  toolResults: ToolResult[];
}

/**
 * Codex log records: `codex.tool_result` → a tool result (the same row as its span event);
 * every other Codex event (`codex.sse_event`, `codex.api_request`, ...) is counted and dropped:
 * the calls come from spans, where the request identity and the trace are.
 */
export function normalizeCodexLogs(
  logs: readonly LogRecord[],
  ctx: NormalizeContext,
): CodexLogBatch {
  const keep: LogRecord[] = [];
  const toolResults: ToolResult[] = [];
  let dropped = 0;
  for (const log of logs) {
    const a = log.attributes;
    const tr =
      log.eventName === 'codex.tool_result' || str(a, 'event.name') === 'codex.tool_result'
        ? toolResultOf(
            a,
            log.traceId ?? '0'.repeat(32),
            log.timeUnixNano !== '0' ? log.timeUnixNano : log.observedTimeUnixNano,
            ctx.workspaceId,
          )
        : null;
    if (tr === null) {
      dropped++;
      continue;
    }
    toolResults.push(tr);
    if (ctx.captureContent) {
      keep.push(log);
    } else {
      const attributes: Attributes = {};
      for (const [k, v] of Object.entries(stripAttributes(a)))
        if (!CONTENT_KEYS.has(k)) setAttribute(attributes, k, v);
      keep.push({ ...log, attributes, body: typeof log.body === 'string' ? null : log.body });
    }
  }
  return { keep, dropped, toolResults };
}
