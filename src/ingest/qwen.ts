/**
 * Qwen Code (`@qwen-code/qwen-code`, a fork of Gemini CLI; measured on 0.24.4 offline against a
 * loopback OpenAI-compatible API: ../shared/agents.md and test/fixtures/real/qwen-code-0.24.4/).
 * What it sends and how it is read:
 * - `qwen-code.llm_request` spans (scope and service `qwen-code`, children of one
 *   `qwen-code.interaction` trace per user turn) are the calls: semconv tokens
 *   (`gen_ai.usage.input_tokens` is the API's `prompt_tokens`, cache included), the finish reason
 *   (`finish_reason`: `stop`, `tool_calls`, `length`), `gen_ai.conversation.id` = the session, and
 *   the agent's own window in `qwen-code.context.usage` (`window_size_tokens`, ./agent-windows.ts).
 *   The session is the run (one trace per turn; `--continue` keeps the session).
 * - Side calls on the span: `/compress` (prompt id `compress-<ms>`), the managed memory extractor
 *   (`subagent_name`, prompt id `<session>#managed-auto-memory-extractor-…`), anything else run
 *   outside an interaction (`llm_request.context` `standalone`). The auto-compression request runs
 *   inside the interaction and looks like any call on its span: the logs tell it (below).
 * - Logs carry the call's trace and span id. `qwen-code.api_request` with prompt logging holds the
 *   request (`request_text`): a last user message "You are the component that summarizes a
 *   conversation …" is the compressor's, a side call. `qwen-code.chat_compression` (no span
 *   context) is a compaction (summary); its `compression_input_token_count` is the compressor
 *   call's input tokens, which finds that call without prompt logging (src/receiver/qwen.ts).
 *   Its `tokens_after` is Qwen Code's estimate (the count before minus the estimated size of what
 *   was dropped), not what the next call holds: it is not kept.
 * - `qwen-code.tool_call` logs: `content_length`, the characters of the result the model got
 *   (after read_file's own truncation); joined to the next main-thread call of the session.
 * - A cut output (`length`) is re-sent by the CLI (then "continue" prompts): each cut request is a
 *   call of its own. Its output is unknown on the span; an `api_response` whose `response_text`
 *   holds text (prompt logging) says it was text. A cut tool call is never executed and nothing says
 *   it was a tool call (no tool span, no tool_call log, `response_text` empty): its output stays
 *   unknown (a warning).
 */
import { recognizes } from '../model/agents/index.ts';
import { qwenCode } from '../model/agents/qwen-code.ts';
import type { Compaction, ToolResult } from '../model/calls.ts';
import type { Attributes, LogRecord, Span } from '../model/telemetry.ts';
import { num, str } from './attrs.ts';
import { compaction } from './compactions.ts';
import { stripAttributes } from './content.ts';
import { streamKeyOf } from './conversation.ts';
import { classifyFinishReason } from './finish.ts';
import { spanIdFor, traceIdFor } from './ids.ts';
import type { NormalizeContext } from './types.ts';

/** The producer id of Qwen Code's calls. */
export const QWEN_PRODUCER = qwenCode.recognize.producer;
/** The source of tool results read from `qwen-code.tool_call` logs. */
export const QWEN_TOOL_LOG_SOURCE = 'qwen_code_log';
/** The side-call reason of the history compressor (auto-compression and `/compress`). */
export const QWEN_COMPRESSOR = 'compress';

/** Its log events and their attributes (its profile's `telemetry`). */
const EVENTS = qwenCode.telemetry.logEvents;
const TOOL_KEYS = qwenCode.telemetry.toolCallKeys;
const COMPACTION_KEYS = qwenCode.telemetry.compactionKeys;
export const QWEN_API_REQUEST = EVENTS.apiRequest;
export const QWEN_API_RESPONSE = EVENTS.apiResponse;
/** Its one compaction event, the chat compression. */
export const QWEN_CHAT_COMPRESSION = Object.keys(EVENTS.compactions)[0]!;

/** The Qwen Code events kept and read; its other events (config, memory, hooks, ...) are dropped. */
const KEPT_EVENTS = new Set([
  QWEN_API_REQUEST,
  QWEN_API_RESPONSE,
  EVENTS.apiError,
  EVENTS.toolCall,
  ...Object.keys(EVENTS.compactions),
]);

/** The compressor's instruction (the last user message of its request). */
const COMPRESSOR_TEXT = qwenCode.telemetry.sideCallMarkers.compressor;

/** True for a span of Qwen Code's own telemetry (scope or service `qwen-code`: its profile's `recognize`). */
export function isQwenCodeSpan(span: Pick<Span, 'scope' | 'resource'>): boolean {
  return recognizes(qwenCode.recognize, span);
}

/** True for the Qwen Code log events rotscope stores and reads. */
export function isKeptQwenEvent(name: string): boolean {
  return KEPT_EVENTS.has(name);
}

/** A string attribute that is set (Qwen Code sends unset ones as empty values). */
function setStr(a: Attributes, key: string): string | null {
  const v = str(a, key);
  return v === null || v === '' || v === '{}' ? null : v;
}

/**
 * The side-call reason a `qwen-code.llm_request` span (or an `api_request` log) shows: `compress`
 * for `/compress`, the sub-agent's name for the memory extractor, `standalone` for other calls
 * outside an interaction; null for the main thread (and for auto-compression: see the logs).
 */
export function qwenSideCall(a: Attributes): string | null {
  const promptId = setStr(a, 'qwen-code.prompt_id') ?? setStr(a, 'prompt_id');
  if (promptId?.startsWith('compress-')) return QWEN_COMPRESSOR;
  const subagent = setStr(a, 'subagent_name');
  if (subagent !== null) return subagent;
  if (promptId !== null && /#managed-auto-memory-extractor-/.test(promptId))
    return 'managed-auto-memory-extractor';
  if (setStr(a, 'llm_request.context') === 'standalone') return 'standalone';
  return null;
}

/** What a Qwen Code `llm_request` span says beyond the semantic conventions. */
export interface QwenSpanFacts {
  sideCall: string | null;
  /** A tool call when it finished for one; unknown when cut (a cut tool call leaves no trace). */
  outputToolCall: boolean | null;
  outputToolName: null;
}

/** Reads a Qwen Code `llm_request` span (see the module doc). */
export function qwenSpanFacts(a: Attributes, finishRaw: string | null): QwenSpanFacts {
  const cls = classifyFinishReason(finishRaw);
  return {
    sideCall: qwenSideCall(a),
    outputToolCall: cls === 'tool_call' ? true : cls === 'output_limit' ? null : false,
    outputToolName: null,
  };
}

/** A call the logs say is a side call, by trace and span id. */
export interface QwenSideFact {
  traceId: string;
  spanId: string;
  conversationId: string;
  sideCall: string;
}

/** A call whose logged response holds text (`api_response.response_text`): its output was text. */
export interface QwenTextFact {
  traceId: string;
  spanId: string;
  conversationId: string;
}

/** A compression whose compressor call is found by its input tokens (src/receiver/qwen.ts). */
export interface QwenCompressorHint {
  conversationId: string;
  inputTokens: number;
  /** The compression's log time: the compressor call ended before it. */
  atNs: string;
}

/** The Qwen Code part of a log batch. */
export interface QwenLogBatch {
  keep: LogRecord[];
  sideFacts: QwenSideFact[];
  textFacts: QwenTextFact[];
  compressors: QwenCompressorHint[];
  toolResults: ToolResult[];
  compactions: Compaction[];
}

function sessionOf(log: LogRecord): string | null {
  return str(log.attributes, 'session.id') ?? str(log.resource, 'session.id');
}

function atNsOf(log: LogRecord): string {
  return log.timeUnixNano !== '0' && log.timeUnixNano !== ''
    ? log.timeUnixNano
    : log.observedTimeUnixNano;
}

/** The text of the last user message of a logged request (`request_text`: Gemini contents). */
function lastUserText(requestText: string): string | null {
  let contents: unknown;
  try {
    contents = JSON.parse(requestText);
  } catch {
    // cut by the CLI: search the tail
    const at = requestText.lastIndexOf('"role":"user"');
    return at < 0 ? null : requestText.slice(at);
  }
  if (!Array.isArray(contents)) return null;
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i] as { role?: unknown; parts?: unknown };
    if (c?.role !== 'user' || !Array.isArray(c.parts)) continue;
    return c.parts
      .map((p: unknown) =>
        typeof (p as { text?: unknown })?.text === 'string' ? (p as { text: string }).text : '',
      )
      .join('\n');
  }
  return null;
}

/**
 * True when a logged response holds text (with prompt logging): a cut output with text was text.
 * A response that was only a tool call logs no text (Qwen Code 0.24.4 leaves `response_text` empty).
 */
function hasResponseText(a: Attributes): boolean {
  const text = setStr(a, 'response_text');
  return text !== null && text.trim() !== '';
}

/** Text facts from stored `api_response` records of known calls, for spans stored after them. */
export function qwenTextFactsFromLogs(records: readonly LogRecord[]): QwenTextFact[] {
  const out: QwenTextFact[] = [];
  for (const log of records) {
    if (log.eventName !== QWEN_API_RESPONSE || log.traceId === null || log.spanId === null)
      continue;
    const sessionId = sessionOf(log);
    if (sessionId !== null && hasResponseText(log.attributes))
      out.push({ traceId: log.traceId, spanId: log.spanId, conversationId: sessionId });
  }
  return out;
}

/** True when a logged request is the history compressor's (its last user message). */
export function isCompressorRequest(a: Attributes): boolean {
  const text = str(a, 'request_text');
  if (text === null || !text.includes(COMPRESSOR_TEXT)) return false;
  return lastUserText(text)?.includes(COMPRESSOR_TEXT) === true;
}

/** The kept Qwen Code events of a log batch (`isKeptQwenEvent`; the module doc). */
export function normalizeQwenLogs(logs: readonly LogRecord[], ctx: NormalizeContext): QwenLogBatch {
  const out: QwenLogBatch = {
    keep: [],
    sideFacts: [],
    textFacts: [],
    compressors: [],
    toolResults: [],
    compactions: [],
  };
  for (const log of logs) {
    const a = log.attributes;
    // read before the content goes (request_text is content)
    const compressor = log.eventName === QWEN_API_REQUEST && isCompressorRequest(a);
    if (ctx.captureContent) out.keep.push(log);
    else {
      const attributes = stripAttributes(a);
      out.keep.push(attributes === a ? log : { ...log, attributes });
    }
    const sessionId = sessionOf(log);
    if (sessionId === null) continue;
    const atNs = atNsOf(log);
    const streamKey = streamKeyOf(sessionId, null);
    if (log.eventName === QWEN_API_REQUEST) {
      if (log.traceId === null || log.spanId === null) continue;
      const side = compressor ? QWEN_COMPRESSOR : qwenSideCall(a);
      if (side !== null)
        out.sideFacts.push({
          traceId: log.traceId,
          spanId: log.spanId,
          conversationId: sessionId,
          sideCall: side,
        });
    } else if (log.eventName === QWEN_API_RESPONSE) {
      if (log.traceId !== null && log.spanId !== null && hasResponseText(a))
        out.textFacts.push({ traceId: log.traceId, spanId: log.spanId, conversationId: sessionId });
    } else if (log.eventName === EVENTS.toolCall) {
      // the memory extractor's own tools do not enter the main thread
      if (qwenSideCall(a) !== null) continue;
      const tool = setStr(a, TOOL_KEYS.name) ?? 'unknown';
      const callId = setStr(a, TOOL_KEYS.callId);
      out.toolResults.push({
        workspaceId: ctx.workspaceId,
        traceId: log.traceId ?? traceIdFor(sessionId),
        spanId: spanIdFor(`qwen_tool_call:${sessionId}:${callId ?? atNs}:${tool}`),
        conversationId: sessionId,
        streamKey,
        toolName: tool,
        toolCallId: callId,
        resultSize: num(a, TOOL_KEYS.size),
        sizeUnit: 'chars',
        atNs,
        source: QWEN_TOOL_LOG_SOURCE,
      });
    } else if (log.eventName === QWEN_CHAT_COMPRESSION) {
      const before = num(a, COMPACTION_KEYS.tokensBefore);
      const after = num(a, COMPACTION_KEYS.tokensAfter);
      // a compression that saved nothing removed nothing
      if (before !== null && after !== null && after >= before) continue;
      const input = num(a, 'compression_input_token_count');
      if (input !== null && input > 0)
        out.compressors.push({ conversationId: sessionId, inputTokens: input, atNs });
      out.compactions.push(
        compaction({
          workspaceId: ctx.workspaceId,
          conversationId: sessionId,
          streamKey,
          runId: sessionId,
          traceId: log.traceId,
          spanId: log.spanId,
          atNs,
          evidence: 'qwen_code_event',
          kind: 'summarize',
          tokensBefore: before,
          // Qwen Code's estimate, not what the next call holds (module doc)
          tokensAfter: null,
          sourceKey: `qwen:${sessionId}:compression:${atNs}`,
        }),
      );
    }
  }
  return out;
}

/** Side facts from stored `api_request` records of known calls, for spans stored after them. */
export function qwenSideFactsFromLogs(records: readonly LogRecord[]): QwenSideFact[] {
  const out: QwenSideFact[] = [];
  for (const log of records) {
    if (log.eventName !== QWEN_API_REQUEST || log.traceId === null || log.spanId === null) continue;
    const sessionId = sessionOf(log);
    if (sessionId === null) continue;
    const side = isCompressorRequest(log.attributes)
      ? QWEN_COMPRESSOR
      : qwenSideCall(log.attributes);
    if (side !== null)
      out.push({
        traceId: log.traceId,
        spanId: log.spanId,
        conversationId: sessionId,
        sideCall: side,
      });
  }
  return out;
}
