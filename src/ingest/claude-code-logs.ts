/**
 * Log records → kept records + normalized rows. Claude Code events (DESIGN §4, conventions
 * §5.3): `claude_code.api_request` → an LlmCall (producer `claude_code_log`, with
 * `requestId`: the store prefers a span-derived call with the same request id, keeping the
 * event's `cost_usd` on it: src/store/ingest.ts fillReportedCosts),
 * `claude_code.tool_result` → a ToolResult (bytes the model saw, MCP tools by their real name:
 * ./claude-tools.ts), `claude_code.compaction` → a Compaction,
 * `api_error` saying the prompt is too long → an LlmCall classed `context_overflow`,
 * `api_request` with a side-call `query_source` (e.g. `compact`) → `sideCalls` (the
 * summarising call of a compaction is a side call, not a second compaction). `gen_ai.*` events
 * are kept without rows.
 */
import type { CallContent, Compaction, LlmCall, Normalized, ToolResult } from '../model/calls.ts';
import { setAttribute, type AttrValue, type LogRecord } from '../model/telemetry.ts';
import { bool, minusMs, num, str } from './attrs.ts';
import { compaction, normalizeTrigger } from './compactions.ts';
import { stripAttributes } from './content.ts';
import { claudeCodeToolName, modelSeenBytes } from './claude-tools.ts';
import { claudeCodeAgentId, sideCallOf, streamKeyOf } from './conversation.ts';
import { classifyFinishReason, overflowError, readFinishReason } from './finish.ts';
import { spanIdFor, traceIdFor } from './ids.ts';
import { callContentFromLogs, isContentEventName } from './content-logs.ts';
import { isCodexResource, normalizeCodexLogs } from './codex.ts';
import { isKeptGeminiEvent, normalizeGeminiLogs, type GeminiLogBatch } from './gemini.ts';
import { isKeptQwenEvent, normalizeQwenLogs, type QwenLogBatch } from './qwen.ts';
import { eventNameOf } from './events.ts';
import { contextUsage, readRawUsage } from './tokens.ts';
import type { NormalizeContext } from './types.ts';
import { agentOfResource, contextWindowFor } from './windows.ts';

/** The result of normalizing one batch of log records. */
export interface LogBatch {
  /** GenAI-relevant records; content removed when the workspace does not capture it. */
  keep: LogRecord[];
  /** Records of no GenAI interest, counted and dropped. */
  dropped: number;
  normalized: Normalized;
  /** Claude Code API requests that are side calls, by request id (spans lack `query_source`). */
  sideCalls: Array<{ requestId: string; reason: string }>;
  /**
   * Parts and output facts of span-derived calls whose message content came as log records
   * (semconv message events), by the call's trace and span id. The store fills the call's
   * null fields from these (the span itself carries no content for such producers).
   */
  callContent: CallContent[];
  /** Gemini CLI facts for calls, and streamed responses still to join (./gemini.ts); null when none. */
  gemini: GeminiLogBatch | null;
  /** Qwen Code side calls, compressions and tool sizes (./qwen.ts); null when none. */
  qwen?: QwenLogBatch | null;
}

/** A reported cost in dollars: a finite number ≥ 0, else null (never a guess). */
function cost(value: number | null): number | null {
  return value !== null && Number.isFinite(value) && value >= 0 ? value : null;
}

function hasGenAiAttr(log: LogRecord): boolean {
  for (const k in log.attributes) if (k.startsWith('gen_ai.')) return true;
  return false;
}

function endNsOf(log: LogRecord): string {
  return log.timeUnixNano !== '0' && log.timeUnixNano !== ''
    ? log.timeUnixNano
    : log.observedTimeUnixNano;
}

/**
 * Normalizes one batch of log records (see the module doc). Claude Code records are
 * grouped by `session.id` (the conversation and the run); without one, the record's trace id
 * (or `prompt.id`) is used and flagged synthetic.
 */
export function normalizeLogs(logs: readonly LogRecord[], ctx: NormalizeContext): LogBatch {
  const keep: LogRecord[] = [];
  const calls: LlmCall[] = [];
  const toolResults: ToolResult[] = [];
  const compactions: Compaction[] = [];
  const sideCalls: Array<{ requestId: string; reason: string }> = [];
  let dropped = 0;
  const names: string[] = [];
  let contentEvents = false;
  const codexLogs: LogRecord[] = [];
  const geminiLogs: LogRecord[] = [];
  const qwenLogs: LogRecord[] = [];

  for (const log of logs) {
    const name = eventNameOf(log);
    names.push(name);
    if (!contentEvents && isContentEventName(name)) contentEvents = true;
    if (isCodexResource(log.resource)) {
      codexLogs.push(log); // ./codex.ts
      continue;
    }
    if (isKeptGeminiEvent(name)) {
      geminiLogs.push(log); // ./gemini.ts
      continue;
    }
    if (isKeptQwenEvent(name)) {
      qwenLogs.push(log); // ./qwen.ts
      continue;
    }
    const claudeCode = name.startsWith('claude_code.');
    if (!claudeCode && !name.startsWith('gen_ai.') && !hasGenAiAttr(log)) {
      dropped++;
      continue;
    }
    keep.push(ctx.captureContent ? log : stripLog(log, claudeCode));
    if (!claudeCode) continue;

    const a = log.attributes;
    const session = str(a, 'session.id') ?? str(log.resource, 'session.id');
    const conversationId = session ?? log.traceId ?? str(a, 'prompt.id') ?? `log:${endNsOf(log)}`;
    const synthetic = session === null;
    const agentId = claudeCodeAgentId(a);
    const streamKey = streamKeyOf(conversationId, agentId);
    const runId = conversationId;
    const traceId = log.traceId ?? traceIdFor(conversationId);
    const atNs = endNsOf(log);

    // an API error that says the input did not fit is a call that overflowed the window
    const overflow = name === 'claude_code.api_error' ? overflowError(a) : null;
    if (name === 'claude_code.api_request' || overflow !== null) {
      const requestId = str(a, 'request_id');
      const sideCall = sideCallOf(a);
      const usage = contextUsage(readRawUsage(a), 'native_excludes');
      const model = str(a, 'model');
      const agent = agentOfResource(log.resource, true);
      const win = contextWindowFor(model, usage.contextTokens, ctx.windowOverrides, agent);
      const dur = num(a, 'duration_ms');
      const finishRaw = readFinishReason(a, undefined, () => undefined) ?? overflow;
      const spanId = spanIdFor(`api_request:${conversationId}:${requestId ?? atNs}`);
      const finishClass = classifyFinishReason(finishRaw);
      calls.push({
        workspaceId: ctx.workspaceId,
        traceId,
        spanId,
        parentSpanId: null,
        conversationId,
        conversationSynthetic: synthetic,
        agentId,
        streamKey,
        runId,
        sideCall,
        requestId,
        startNs: dur === null ? atNs : minusMs(atNs, dur),
        endNs: atNs,
        producer: 'claude_code_log',
        provider: 'anthropic',
        requestModel: model,
        responseModel: model,
        ...usage,
        contextWindow: win.window,
        windowSource: win.source,
        agentVersion: agent?.version ?? null,
        finishReasonRaw: finishRaw,
        finishClass,
        // the event has no stop reason: whether the output held a tool call is unknown
        outputToolCall: finishClass === 'tool_call' ? true : bool(a, 'response.has_tool_call'),
        outputToolName: null,
        maxOutputTokens: null,
        parts: null,
        compacted: false,
        // what Claude Code says the request cost (conventions §5.3); never priced here
        costUsd: cost(num(a, 'cost_usd')),
      });
      if (sideCall !== null && requestId !== null) sideCalls.push({ requestId, reason: sideCall });
      // A `compact` side call is the summarising request of a compaction that the `compaction`
      // event reports (with its trigger and token counts): one compaction, counted once.
    } else if (name === 'claude_code.tool_result') {
      const toolUseId = str(a, 'tool_use_id');
      // MCP tools by their real name; a result persisted to a file at what the model saw of it
      const toolName = claudeCodeToolName(a);
      toolResults.push({
        workspaceId: ctx.workspaceId,
        traceId,
        spanId: spanIdFor(`tool_result:${conversationId}:${toolUseId ?? atNs}`),
        conversationId,
        streamKey,
        toolName: toolName ?? 'unknown',
        toolCallId: toolUseId,
        resultSize: modelSeenBytes(toolName, num(a, 'tool_result_size_bytes')),
        sizeUnit: 'bytes',
        atNs,
        source: 'claude_code_log',
      });
    } else if (name === 'claude_code.compaction') {
      if (bool(a, 'success') === false) continue;
      compactions.push(
        compaction({
          workspaceId: ctx.workspaceId,
          conversationId,
          streamKey,
          runId,
          traceId: log.traceId,
          spanId: log.spanId,
          atNs,
          evidence: 'claude_code_event',
          sourceKey: `log:${conversationId}:${atNs}`,
          trigger: normalizeTrigger(a['trigger']),
          tokensBefore: num(a, 'pre_tokens'),
          tokensAfter: num(a, 'post_tokens'),
        }),
      );
    }
  }
  if (codexLogs.length > 0) {
    const codex = normalizeCodexLogs(codexLogs, ctx);
    keep.push(...codex.keep);
    dropped += codex.dropped;
    toolResults.push(...codex.toolResults);
  }
  let gemini: GeminiLogBatch | null = null;
  if (geminiLogs.length > 0) {
    gemini = normalizeGeminiLogs(geminiLogs, ctx);
    const offset = keep.length;
    keep.push(...gemini.keep);
    for (const p of gemini.pending) p.keepIndex += offset;
    toolResults.push(...gemini.toolResults);
    compactions.push(...gemini.compactions);
  }
  let qwen: QwenLogBatch | null = null;
  if (qwenLogs.length > 0) {
    qwen = normalizeQwenLogs(qwenLogs, ctx);
    keep.push(...qwen.keep);
    toolResults.push(...qwen.toolResults);
    compactions.push(...qwen.compactions);
  }
  const callContent = contentEvents ? callContentFromLogs(logs, names) : [];
  return {
    keep,
    dropped,
    normalized: { calls, toolResults, compactions },
    sideCalls,
    callContent,
    gemini,
    qwen,
  };
}

/** A log record without content: content attributes and body content removed. */
function stripLog(log: LogRecord, claudeCode: boolean): LogRecord {
  const attributes = stripAttributes(log.attributes);
  const body = claudeCode && typeof log.body === 'string' ? log.body : stripBody(log.body, 0);
  if (attributes === log.attributes && body === log.body) return log;
  return { ...log, attributes, body };
}

const BODY_CONTENT_KEYS = new Set(['content', 'arguments', 'text', 'body', 'prompt']);

/**
 * A semconv event body without its content: `content`, `arguments`, `text` go; ids, roles,
 * tool names, finish reasons and indexes stay (they say which tool was called). A plain
 * string body is content and goes.
 */
function stripBody(v: AttrValue, depth: number): AttrValue {
  if (v === null || typeof v !== 'object' || depth > 8) return typeof v === 'string' ? null : v;
  if (Array.isArray(v)) return v.map((x) => stripBody(x, depth + 1));
  const out: Record<string, AttrValue> = {};
  for (const k in v) {
    if (BODY_CONTENT_KEYS.has(k)) continue;
    const x = v[k] as AttrValue;
    setAttribute(out, k, typeof x === 'string' ? x : stripBody(x, depth + 1));
  }
  return out;
}
