/**
 * OpenCode (`service.name` `opencode`, measured on 1.18.33; test/e2e/opencode-real,
 * test/fixtures/real/opencode-1.18.33). OpenCode exports its own Effect spans (`sql.execute`,
 * `Config.get`, `Plugin.*`, `Session.*`, … about 500-1,000 a run) and, with
 * `experimental.openTelemetry` in opencode.json, the AI SDK's spans of its model calls. Only the
 * AI SDK spans (`ai.*`) matter: the rest are counted and dropped before any other rule sees them
 * (`keepOpenCodeSpans`). What the generic AI SDK reading (./spans.ts, producer profile `vercel`)
 * gets wrong for OpenCode is put right after it (`applyOpenCode`):
 * - the producer is `opencode` (its coverage hints and cut-off advice name OpenCode's knobs);
 * - the conversation is `session.id` (= `ai.telemetry.metadata.sessionId`, kept by `--continue`):
 *   OpenCode sends no `gen_ai.conversation.id`, and the run is the session (one trace per process);
 * - the compaction summary: OpenCode's compaction (`SessionCompaction.process`) asks the model for a
 *   summary with an ordinary `ai.streamText` of the same session, whose last user message starts
 *   "Here is the conversation so far:" (then `<conversation>`; system prompt "You are a context
 *   summarization agent"). That call is a side call (`compaction`) and it is the evidence of the
 *   compaction (evidence `span`, kind `summarize`): the `SessionCompaction.*` spans themselves carry
 *   no attribute at all (no session id) and end after the summary, so they cannot place it;
 * - a tool call whose arguments do not parse (cut by the output limit) is rewritten by OpenCode to
 *   the tool `invalid` with `input.tool` the real tool: the call names the real tool;
 * - the title generator (a call of the small model whose system prompt starts "You are a title
 *   generator") is a side call (`title`).
 * Windows: OpenCode sends neither the window nor its compaction threshold (limit.context −
 * maxOutputTokens, 111,616 for gpt-4o), only `ai.settings.maxOutputTokens`; the window is the
 * catalog's for the model (128,000 for gpt-4o), unknown for a custom model the catalog lacks.
 */
import { recognizesResource } from '../model/agents/index.ts';
import { openCode } from '../model/agents/opencode.ts';
import type { Compaction, LlmCall, Normalized } from '../model/calls.ts';
import type { Attributes, Span } from '../model/telemetry.ts';
import { json, str } from './attrs.ts';
import { compaction } from './compactions.ts';
import type { NormalizeContext } from './types.ts';

/** The producer of calls read from OpenCode's telemetry. */
export const OPENCODE_PRODUCER = openCode.recognize.producer;

/** The side-call reasons of OpenCode's own calls. */
export const OPENCODE_SUMMARY_SIDE_CALL = 'compaction';
export const OPENCODE_TITLE_SIDE_CALL = 'title';

/**
 * What opens the last user message of OpenCode's compaction summary request, that request's system
 * prompt, and the title generator's (its profile's `sideCallMarkers`).
 */
const {
  summaryPrompt: SUMMARY_MARKER,
  summarySystem: SUMMARY_SYSTEM,
  titleSystem: TITLE_SYSTEM,
} = openCode.telemetry.sideCallMarkers;

/** True for a span or log record of OpenCode (its `service.name`, its profile's `recognize`). */
export function isOpenCodeResource(resource: Attributes): boolean {
  return recognizesResource(openCode.recognize, resource);
}

/** OpenCode's spans of interest: the AI SDK's (`ai.*`). Its own Effect spans are internal. */
function isOpenCodeSpanOfInterest(span: Span): boolean {
  return span.name.startsWith('ai.');
}

/**
 * The spans of a batch without OpenCode's internal ones (spans of other producers are kept as they
 * are), and how many were dropped.
 */
export function keepOpenCodeSpans(spans: readonly Span[]): { kept: Span[]; dropped: number } {
  const kept = spans.filter((s) => !isOpenCodeResource(s.resource) || isOpenCodeSpanOfInterest(s));
  return { kept, dropped: spans.length - kept.length };
}

/** The first `length` characters of the content of the message of `role` that opens or ends the prompt. */
function promptMessageStart(messages: unknown, role: string, last: boolean): string | null {
  if (!Array.isArray(messages)) return null;
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[last ? messages.length - 1 - i : i];
    if (typeof m !== 'object' || m === null) continue;
    const r = m as Record<string, unknown>;
    if (r['role'] !== role) continue;
    const content = r['content'];
    if (typeof content === 'string') return content.slice(0, 200);
    if (Array.isArray(content))
      for (const part of content)
        if (typeof part === 'object' && part !== null) {
          const text = (part as Record<string, unknown>)['text'];
          if (typeof text === 'string') return text.slice(0, 200);
        }
    return '';
  }
  return null;
}

/** Which side call an OpenCode call is, from its prompt (`ai.prompt.messages`), else null. */
export function openCodeSideCall(attrs: Attributes): string | null {
  const raw = attrs['ai.prompt.messages'];
  if (typeof raw !== 'string') return null;
  // cheap look first: both markers are plain text of the prompt
  // a plugin may replace the summary prompt (`experimental.session.compacting`), not the system one
  const summary = raw.includes(SUMMARY_MARKER) || raw.includes(SUMMARY_SYSTEM);
  const title = !summary && raw.includes(TITLE_SYSTEM);
  if (!summary && !title) return null;
  const messages = json(raw);
  if (summary) {
    const user = promptMessageStart(messages, 'user', true);
    const system = promptMessageStart(messages, 'system', false);
    if (user?.startsWith(SUMMARY_MARKER) || system?.startsWith(SUMMARY_SYSTEM))
      return OPENCODE_SUMMARY_SIDE_CALL;
    return null;
  }
  return promptMessageStart(messages, 'system', false)?.startsWith(TITLE_SYSTEM)
    ? OPENCODE_TITLE_SIDE_CALL
    : null;
}

/**
 * The real tool of the last tool call in `ai.response.toolCalls` when OpenCode rewrote it to
 * `invalid` (its arguments did not parse): `input.tool` (the input is an object or its JSON text).
 */
export function openCodeInvalidTool(attrs: Attributes): string | null {
  const raw = attrs['ai.response.toolCalls'];
  if (raw === undefined) return null;
  const calls = json(raw);
  if (!Array.isArray(calls) || calls.length === 0) return null;
  const last: unknown = calls[calls.length - 1];
  if (typeof last !== 'object' || last === null) return null;
  const call = last as Record<string, unknown>;
  if (call['toolName'] !== 'invalid') return null;
  let input = call['input'] ?? call['args'];
  if (typeof input === 'string') input = json(input);
  if (typeof input !== 'object' || input === null) return null;
  const tool = (input as Record<string, unknown>)['tool'];
  return typeof tool === 'string' && tool !== '' ? tool : null;
}

/**
 * Puts right what the generic reading of OpenCode's AI SDK spans gets wrong (module doc; its
 * producer and side calls are set by ./spans.ts as each call is built): cut tool calls name the
 * real tool, the run is the session, tool results are sized as the model got them, and each
 * summary call gives its compaction.
 */
export function applyOpenCode(
  normalized: Normalized,
  spans: readonly Span[],
  ctx: NormalizeContext,
): Normalized {
  const byId = new Map<string, Span>();
  for (const s of spans) if (isOpenCodeResource(s.resource)) byId.set(s.spanId, s);
  if (byId.size === 0) return normalized;
  const compactions: Compaction[] = [];
  const calls = normalized.calls.map((call): LlmCall => {
    const span = byId.get(call.spanId);
    if (span === undefined || call.producer !== OPENCODE_PRODUCER) return call;
    const a = span.attributes;
    const invalid = call.outputToolCall === true ? openCodeInvalidTool(a) : null;
    const next: LlmCall = {
      ...call,
      outputToolName: invalid ?? call.outputToolName,
      // the run is the session, as for Claude Code (OpenCode makes one trace per process)
      runId: call.conversationSynthetic ? call.runId : call.conversationId,
    };
    if (call.sideCall === OPENCODE_SUMMARY_SIDE_CALL) {
      const summary = str(a, 'ai.response.text');
      compactions.push(
        compaction({
          workspaceId: ctx.workspaceId,
          conversationId: next.conversationId,
          streamKey: next.streamKey,
          runId: next.runId,
          traceId: span.traceId,
          spanId: span.spanId,
          atNs: span.endTimeUnixNano,
          evidence: 'span',
          kind: 'summarize',
          sourceKey: `opencode:compaction:${span.traceId}:${span.spanId}`,
          summarySize: summary?.length ?? null,
          summary: ctx.captureContent ? summary : null,
        }),
      );
    }
    return next;
  });
  const toolResults = normalized.toolResults.map((r) => {
    const span = byId.get(r.spanId);
    if (span === undefined) return r;
    const size = modelSizeOfToolResult(span.attributes);
    return size === null ? r : { ...r, resultSize: size, sizeUnit: 'chars' as const };
  });
  return {
    ...normalized,
    calls,
    toolResults,
    compactions:
      compactions.length === 0
        ? normalized.compactions
        : [...normalized.compactions, ...compactions],
  };
}

/**
 * The characters of a tool result the model got: `ai.toolCall.result` is OpenCode's whole tool
 * answer (`{title, output, metadata}`, the metadata often repeating the output); the model gets
 * its `output`. Null when that is not there (the generic size stands).
 */
function modelSizeOfToolResult(a: Attributes): number | null {
  const raw = a['ai.toolCall.result'];
  if (typeof raw !== 'string') return null;
  const result = json(raw);
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return null;
  const output = (result as Record<string, unknown>)['output'];
  return typeof output === 'string' ? output.length : null;
}
