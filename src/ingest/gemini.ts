/**
 * Gemini CLI (`@google/gemini-cli`, measured on 0.61.0: conventions §5.0.2 and
 * test/fixtures/real/gemini-cli-0.61.0/). What it sends and how it is read:
 * - `llm_call` spans (scope `gemini-cli`) are the calls: model, input and output tokens (Gemini's
 *   `promptTokenCount` already holds any cached part), the session as `gen_ai.conversation.id`;
 *   every call and every tool batch is a trace of its own, so the run is the session. The span
 *   carries no finish reason; its `gen_ai.output.messages` (Gemini contents, cut at 10,000
 *   characters, only with prompt logging on) says whether the output held a function call, and
 *   `gen_ai.system_instructions` (always, whole) the system prompt's size. Its input messages are
 *   cut at 10,000 characters too, so they give no sizes: tool results come from the logs.
 * - `gemini_cli.api_request` logs (inside the call's span: they carry its trace and span id) say
 *   who made the call (`role`): `main`, `subagent`, or a utility (`utility_compressor`,
 *   `utility_router`, ...), which is a side call.
 * - `gemini_cli.api_response` logs hold the finish reasons, one per candidate of every stream
 *   chunk (`[stop, stop, length]`: any `length` is a cut), and the response (`response_text`, with
 *   prompt logging). For streamed calls they are emitted outside the span and carry no trace or
 *   span id: each is joined to the latest unanswered `api_request` of the same session, prompt id,
 *   role and model before it (the CLI awaits one stream before the next), in the batch or stored
 *   earlier (src/receiver/gemini.ts), and stored with that request's trace and span id.
 * - `gemini_cli.tool_call` logs: `content_length`, the characters of the result the model got
 *   (after the CLI's own truncation); joined to the next main-thread call of the session.
 * - `gemini_cli.chat_compression` (`tokens_before`, `tokens_after`) is a compaction (summary);
 *   `gemini_cli.tool_output_masking` (old tool outputs replaced by a stub) one of kind
 *   `clear_tool_results`.
 */
import { geminiCli } from '../model/agents/gemini-cli.ts';
import { recognizes } from '../model/agents/index.ts';
import type { Compaction, FinishClass, InputParts, ToolResult } from '../model/calls.ts';
import type { Attributes, AttrValue, LogRecord, Span } from '../model/telemetry.ts';
import { cmpNs, isObj, json, minusMs, num, str } from './attrs.ts';
import { compaction } from './compactions.ts';
import { stripAttributes } from './content.ts';
import { streamKeyOf } from './conversation.ts';
import { classifyFinishReason } from './finish.ts';
import { spanIdFor, traceIdFor } from './ids.ts';
import { partsFromBytes } from './tool-parts.ts';
import type { NormalizeContext } from './types.ts';

/** The producer id of Gemini CLI's calls. */
export const GEMINI_PRODUCER = geminiCli.recognize.producer;
/** The source of tool results read from `gemini_cli.tool_call` logs. */
export const GEMINI_TOOL_LOG_SOURCE = 'gemini_cli_log';

/** Its log events and their attributes (its profile's `telemetry`). */
const EVENTS = geminiCli.telemetry.logEvents;
const COMPACTION_EVENTS: ReadonlyMap<string, 'summarize' | 'clear_tool_results'> = new Map(
  Object.entries(EVENTS.compactions),
);
const TOOL_KEYS = geminiCli.telemetry.toolCallKeys;
const COMPACTION_KEYS = geminiCli.telemetry.compactionKeys;
export const GEMINI_API_REQUEST = EVENTS.apiRequest;
export const GEMINI_API_RESPONSE = EVENTS.apiResponse;

/** The Gemini CLI events kept and read; its other events (config, routing, ...) are dropped. */
const KEPT_EVENTS = new Set([
  GEMINI_API_REQUEST,
  GEMINI_API_RESPONSE,
  EVENTS.apiError,
  EVENTS.toolCall,
  ...COMPACTION_EVENTS.keys(),
]);

/** A response may be logged this long after its request beyond its own `duration_ms`. */
const JOIN_SLACK_MS = 5_000;

/** True for a span of Gemini CLI's own telemetry (scope or service `gemini-cli`). */
export function isGeminiCliSpan(span: Pick<Span, 'scope' | 'resource'>): boolean {
  return recognizes(geminiCli.recognize, span);
}

/** True for the Gemini CLI log events rotscope stores and reads. */
export function isKeptGeminiEvent(name: string): boolean {
  return KEPT_EVENTS.has(name);
}

/** The side-call reason of a Gemini CLI `role`: null for the main loop and sub-agents. */
export function geminiSideCall(role: string | null): string | null {
  if (role === null || role === 'main' || role === 'subagent') return null;
  return role;
}

/** The function calls in Gemini contents (an array of contents, one content, or responses). */
function functionCallNames(v: unknown, out: string[], depth = 0): void {
  if (depth > 8 || v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) {
    for (const x of v) functionCallNames(x, out, depth + 1);
    return;
  }
  const fc = (v as Record<string, unknown>).functionCall;
  if (isObj(fc)) {
    out.push(typeof fc.name === 'string' ? fc.name : '');
    return;
  }
  for (const k of ['parts', 'content', 'candidates']) {
    const x = (v as Record<string, unknown>)[k];
    if (x !== undefined) functionCallNames(x, out, depth + 1);
  }
}

/**
 * Whether a Gemini response (contents, `response_text` chunks) held a function call, and the
 * last one's name; `null` when the text is absent. Text cut by the CLI (it is not JSON then) is
 * searched for `"functionCall":{"name":"…"`.
 */
export function outputFunctionCall(
  v: AttrValue | undefined,
): { toolCall: boolean; name: string | null } | null {
  if (v === undefined || v === null || v === '') return null;
  const parsed = json(v);
  const names: string[] = [];
  if (parsed !== undefined) functionCallNames(parsed, names);
  else if (typeof v === 'string') {
    for (const m of v.matchAll(/"functionCall":\{"name":"([^"\\]*)"/g)) names.push(m[1] ?? '');
  }
  const last = names.at(-1);
  return { toolCall: names.length > 0, name: last === undefined || last === '' ? null : last };
}

/** What a Gemini CLI `llm_call` span says beyond the semantic conventions. */
export interface GeminiSpanFacts {
  outputToolCall: boolean | null;
  outputToolName: string | null;
  /** The system prompt's size (estimated tokens); tools are filled from the logs. */
  parts: InputParts | null;
}

/** Reads a Gemini CLI `llm_call` span (see the module doc). */
export function geminiSpanFacts(a: Attributes): GeminiSpanFacts {
  const out = outputFunctionCall(a['gen_ai.output.messages']);
  const sys = a['gen_ai.system_instructions'];
  const sysLength = typeof sys === 'string' ? sys.length : null;
  return {
    outputToolCall: out === null ? null : out.toolCall,
    outputToolName: out?.name ?? null,
    parts: sysLength === null ? null : partsFromBytes({}, sysLength),
  };
}

/** What an `api_response` says about its call's output. */
export interface GeminiFinish {
  finishReasonRaw: string | null;
  finishClass: FinishClass | null;
  /** From `response_text` (prompt logging); null when it is not there. */
  outputToolCall: boolean | null;
  outputToolName: string | null;
}

/** The finish reasons of an `api_response` (an array, or a JSON string of one). */
function finishReasons(v: AttrValue | undefined): string[] {
  const list = typeof v === 'string' ? (json(v) ?? v) : v;
  if (typeof list === 'string') return list === '' ? [] : [list];
  if (!Array.isArray(list)) return [];
  return list.filter((x): x is string => typeof x === 'string' && x !== '');
}

/** The decisive finish reason: any chunk's cut (`length`), else the last chunk's. */
export function responseFinish(a: Attributes): GeminiFinish {
  const reasons = finishReasons(a['finish_reasons']);
  const cut = reasons.find((r) => classifyFinishReason(r) === 'output_limit');
  const raw = cut ?? reasons.at(-1) ?? null;
  const out = outputFunctionCall(a['response_text']);
  return {
    finishReasonRaw: raw,
    finishClass: classifyFinishReason(raw),
    outputToolCall: out === null ? null : out.toolCall,
    outputToolName: out?.name ?? null,
  };
}

/** What the logs say about one stored (or still to come) call, by its trace and span id. */
export interface GeminiCallFacts {
  traceId: string;
  spanId: string;
  conversationId: string;
  /** From `api_request`: the caller's role (`main`, `subagent`, `utility_…`). */
  role?: string | null;
  /** From `api_response`. */
  finish?: GeminiFinish;
}

/** The key a streamed `api_response` is joined to its `api_request` by. */
export interface GeminiRequestKey {
  sessionId: string;
  promptId: string | null;
  role: string | null;
  model: string | null;
}

/** A streamed `api_response` of the batch not joined to a request in the same batch. */
export interface GeminiPendingResponse {
  /** Index of the record in `keep` (it gets the request's trace and span id). */
  keepIndex: number;
  key: GeminiRequestKey;
  atNs: string;
  /** The earliest time its request can have been logged. */
  notBeforeNs: string;
  finish: GeminiFinish;
}

/** The Gemini CLI part of a log batch. */
export interface GeminiLogBatch {
  /** The records to store, in input order. */
  keep: LogRecord[];
  facts: GeminiCallFacts[];
  pending: GeminiPendingResponse[];
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

function keyOf(a: Attributes, sessionId: string): GeminiRequestKey {
  return {
    sessionId,
    promptId: str(a, 'prompt_id'),
    role: str(a, 'role'),
    model: str(a, 'model'),
  };
}

const sameKey = (x: GeminiRequestKey, y: GeminiRequestKey) =>
  x.sessionId === y.sessionId &&
  x.promptId === y.promptId &&
  x.role === y.role &&
  x.model === y.model;

/** The earliest time a response's request can have been logged: its time − duration − slack. */
function notBefore(atNs: string, a: Attributes): string {
  const ms = (num(a, 'duration_ms') ?? 0) + JOIN_SLACK_MS;
  return BigInt(atNs) > BigInt(ms) * 1_000_000n ? minusMs(atNs, ms) : '0';
}

/**
 * The kept Gemini CLI events of a log batch (`isKeptGeminiEvent`; the module doc): the records
 * to store (content removed unless the workspace captures it), facts for calls (roles, finish
 * reasons; streamed responses joined to a request of the batch, else left `pending` for the
 * store), tool results and compactions. A joined response is stored with its request's trace and
 * span id.
 */
export function normalizeGeminiLogs(
  logs: readonly LogRecord[],
  ctx: NormalizeContext,
): GeminiLogBatch {
  const keep: LogRecord[] = logs.map((log) => {
    if (ctx.captureContent) return log;
    const attributes = stripAttributes(log.attributes);
    return attributes === log.attributes ? log : { ...log, attributes };
  });
  const out: GeminiLogBatch = { keep, facts: [], pending: [], toolResults: [], compactions: [] };
  const requests: Array<{
    key: GeminiRequestKey;
    atNs: string;
    traceId: string;
    spanId: string;
    taken: boolean;
  }> = [];
  const responses: Array<{ keepIndex: number; log: LogRecord; sessionId: string }> = [];
  logs.forEach((log, keepIndex) => {
    const name = log.eventName;
    const sessionId = sessionOf(log);
    if (sessionId === null) return;
    const a = log.attributes;
    const atNs = atNsOf(log);
    const streamKey = streamKeyOf(sessionId, null);
    if (name === GEMINI_API_REQUEST) {
      if (log.traceId === null || log.spanId === null) return;
      requests.push({
        key: keyOf(a, sessionId),
        atNs,
        traceId: log.traceId,
        spanId: log.spanId,
        taken: false,
      });
      out.facts.push({
        traceId: log.traceId,
        spanId: log.spanId,
        conversationId: sessionId,
        role: str(a, 'role'),
      });
    } else if (name === GEMINI_API_RESPONSE) {
      responses.push({ keepIndex, log, sessionId });
    } else if (name === EVENTS.toolCall) {
      const tool = str(a, TOOL_KEYS.name) ?? 'unknown';
      out.toolResults.push({
        workspaceId: ctx.workspaceId,
        traceId: log.traceId ?? traceIdFor(sessionId),
        spanId: spanIdFor(`gemini_tool_call:${sessionId}:${atNs}:${tool}`),
        conversationId: sessionId,
        streamKey,
        toolName: tool,
        toolCallId: null,
        resultSize: num(a, TOOL_KEYS.size),
        sizeUnit: 'chars',
        atNs,
        source: GEMINI_TOOL_LOG_SOURCE,
      });
    } else if (COMPACTION_EVENTS.has(name)) {
      const before = num(a, COMPACTION_KEYS.tokensBefore);
      const after = num(a, COMPACTION_KEYS.tokensAfter);
      // a failed compression logs before = after (or a larger after): nothing was removed
      if (before !== null && after !== null && after >= before) return;
      const masking = COMPACTION_EVENTS.get(name) === 'clear_tool_results';
      out.compactions.push(
        compaction({
          workspaceId: ctx.workspaceId,
          conversationId: sessionId,
          streamKey,
          runId: sessionId,
          traceId: log.traceId,
          spanId: log.spanId,
          atNs,
          evidence: 'gemini_cli_event',
          kind: masking ? 'clear_tool_results' : 'summarize',
          trigger: masking ? 'auto' : null,
          tokensBefore: before,
          tokensAfter: after,
          sourceKey: `gemini:${sessionId}:${masking ? 'masking' : 'compression'}:${atNs}`,
        }),
      );
    }
  });

  // responses inside their span (non-streamed calls) answer their own request
  const unjoined: typeof responses = [];
  for (const r of responses) {
    if (r.log.traceId !== null && r.log.spanId !== null) {
      for (const q of requests)
        if (q.traceId === r.log.traceId && q.spanId === r.log.spanId) q.taken = true;
      out.facts.push({
        traceId: r.log.traceId,
        spanId: r.log.spanId,
        conversationId: r.sessionId,
        finish: responseFinish(r.log.attributes),
      });
    } else unjoined.push(r);
  }
  unjoined.sort((x, y) => cmpNs(atNsOf(x.log), atNsOf(y.log)));
  for (const r of unjoined) {
    const a = r.log.attributes;
    const key = keyOf(a, r.sessionId);
    const atNs = atNsOf(r.log);
    const from = notBefore(atNs, a);
    const finish = responseFinish(a);
    let best: (typeof requests)[number] | undefined;
    for (const q of requests) {
      if (q.taken || !sameKey(q.key, key)) continue;
      if (cmpNs(q.atNs, atNs) > 0 || cmpNs(q.atNs, from) < 0) continue;
      if (best === undefined || cmpNs(q.atNs, best.atNs) > 0) best = q;
    }
    if (best === undefined) {
      out.pending.push({ keepIndex: r.keepIndex, key, atNs, notBeforeNs: from, finish });
      continue;
    }
    best.taken = true;
    joinResponse(keep, r.keepIndex, best.traceId, best.spanId);
    out.facts.push({
      traceId: best.traceId,
      spanId: best.spanId,
      conversationId: r.sessionId,
      finish,
    });
  }
  return out;
}

/** Gives the kept response record at `keepIndex` its request's trace and span id. */
export function joinResponse(
  keep: LogRecord[],
  keepIndex: number,
  traceId: string,
  spanId: string,
): void {
  const rec = keep[keepIndex];
  if (rec !== undefined) keep[keepIndex] = { ...rec, traceId, spanId };
}

/**
 * Facts from stored records of known calls (their `api_request`, and the `api_response` joined
 * to it), for calls whose span arrives after their logs.
 */
export function geminiFactsFromLogs(records: readonly LogRecord[]): GeminiCallFacts[] {
  const out: GeminiCallFacts[] = [];
  for (const log of records) {
    if (log.traceId === null || log.spanId === null) continue;
    const sessionId = sessionOf(log);
    if (sessionId === null) continue;
    if (log.eventName === GEMINI_API_REQUEST)
      out.push({
        traceId: log.traceId,
        spanId: log.spanId,
        conversationId: sessionId,
        role: str(log.attributes, 'role'),
      });
    else if (log.eventName === GEMINI_API_RESPONSE)
      out.push({
        traceId: log.traceId,
        spanId: log.spanId,
        conversationId: sessionId,
        finish: responseFinish(log.attributes),
      });
  }
  return out;
}
