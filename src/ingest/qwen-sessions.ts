/**
 * Qwen Code session files (`~/.qwen/projects/<cwd>/chats/<session>.jsonl`, measured on 0.24.4:
 * test/fixtures/real/qwen-code-0.24.4/) → LLM calls and compactions. One JSON line per record
 * `{ uuid, parentUuid, sessionId, timestamp, type, provenance, version, ... }`:
 * - `system` `ui_telemetry` records copy the CLI's telemetry events (`systemPayload.uiEvent`):
 *   every `qwen-code.api_response` (the main thread's, the compressor's and the memory
 *   extractor's calls: `response_id`, `model`, `input_token_count` with the cache included,
 *   `cached_content_token_count`, `output_token_count`, `duration_ms`, `prompt_id`,
 *   `subagent_name`, `response_text`) and every `qwen-code.tool_call` (`content_length`);
 * - `assistant` records follow their call's `api_response`: the output (`message.parts`, a
 *   `functionCall` part for a tool call) and the window Qwen Code judged it on
 *   (`contextWindowSize`);
 * - `system` `chat_compression` records: a compaction (`triggerReason` `token_limit` or `manual`;
 *   the token counts are Qwen Code's estimates).
 * The file holds no finish reason: a cut output is not seen from it (the telemetry has it).
 * Calls have the request id of their telemetry (the response id), so one request read from both
 * is one call (IMPORT_CALL_PRODUCERS, src/receiver/merge-rules.ts).
 */
import type { Compaction, InputParts, LlmCall, Normalized } from '../model/calls.ts';
import type { Attributes } from '../model/telemetry.ts';
import { field as str, isObj, isoToNs } from './attrs.ts';
import { compaction } from './compactions.ts';
import { streamKeyOf } from './conversation.ts';
import { spanIdFor, traceIdFor } from './ids.ts';
import { jsonObjectLines } from './json-lines.ts';
import { QWEN_COMPRESSOR, qwenSideCall } from './qwen.ts';
import { contextUsage } from './tokens.ts';
import { partsFromBytes } from './tool-parts.ts';
import type { NormalizeContext, SessionFileReader } from './types.ts';
import { reportedWindowFor } from './windows.ts';

/** The producer of calls read from Qwen Code session files. */
export const QWEN_SESSION_PRODUCER = 'qwen_code_session';

/** True when a parsed JSON line is a Qwen Code session record (Claude Code's have no `provenance`). */
export function isQwenSessionEntry(v: unknown): boolean {
  return (
    isObj(v) &&
    typeof v['sessionId'] === 'string' &&
    typeof v['type'] === 'string' &&
    typeof v['provenance'] === 'string'
  );
}

const numOf = (o: Record<string, unknown>, k: string): number | null => {
  const v = o[k];
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
};

/** Whether an assistant record's output held a function call, and the last one's name. */
function outputOf(rec: Record<string, unknown>): { toolCall: boolean; name: string | null } {
  const message = isObj(rec['message']) ? rec['message'] : {};
  const parts = Array.isArray(message['parts']) ? message['parts'] : [];
  let name: string | null = null;
  let toolCall = false;
  for (const p of parts) {
    const fc = isObj(p) && isObj(p['functionCall']) ? p['functionCall'] : null;
    if (fc === null) continue;
    toolCall = true;
    name = typeof fc['name'] === 'string' ? fc['name'] : name;
  }
  return { toolCall, name };
}

/** Normalizes one Qwen Code session file (see the module doc). */
export function normalizeQwenSession(text: string, ctx: NormalizeContext): Normalized {
  const calls: LlmCall[] = [];
  const compactions: Compaction[] = [];
  let pendingTools: Record<string, number> = {};
  let last: LlmCall | null = null;
  /** The window Qwen Code judged each model on (its assistant records). */
  const windows = new Map<string, number>();
  for (const rec of jsonObjectLines(text)) {
    if (!isQwenSessionEntry(rec)) continue;
    const sessionId = rec['sessionId'] as string;
    const atNs = isoToNs(str(rec, 'timestamp'));
    if (atNs === null) continue;
    const streamKey = streamKeyOf(sessionId, null);
    const payload = isObj(rec['systemPayload']) ? rec['systemPayload'] : {};
    const subtype = str(rec, 'subtype');
    if (rec['type'] === 'system' && subtype === 'ui_telemetry' && isObj(payload['uiEvent'])) {
      const e = payload['uiEvent'];
      const name = str(e, 'event.name');
      if (name === 'qwen-code.tool_call') {
        if (qwenSideCall(e as Attributes) !== null) continue;
        const tool = str(e, 'function_name') ?? 'unknown';
        const chars = numOf(e, 'content_length');
        if (chars !== null) pendingTools[tool] = (pendingTools[tool] ?? 0) + chars;
        continue;
      }
      if (name !== 'qwen-code.api_response') continue;
      const input = numOf(e, 'input_token_count');
      if (input === null) continue;
      const responseText = str(e, 'response_text') ?? '';
      const side =
        qwenSideCall(e as Attributes) ??
        (responseText.includes('<state_snapshot>') ? QWEN_COMPRESSOR : null);
      const model = str(e, 'model');
      const endNs = isoToNs(str(e, 'event.timestamp')) ?? atNs;
      const dur = numOf(e, 'duration_ms') ?? 0;
      const startNs = (BigInt(endNs) - BigInt(Math.round(dur)) * 1_000_000n).toString();
      let parts: InputParts | null = null;
      if (side === null) {
        if (Object.keys(pendingTools).length > 0) parts = partsFromBytes(pendingTools, null);
        pendingTools = {};
      }
      const usage = contextUsage(
        {
          inputTokensRaw: input,
          cacheReadTokens: numOf(e, 'cached_content_token_count'),
          cacheWriteTokens: null,
          outputTokens: numOf(e, 'output_token_count'),
          inputKey: null,
        },
        'unknown',
      );
      const responseId = str(e, 'response_id');
      const win = reportedWindowFor(model, null, usage.contextTokens, ctx.windowOverrides);
      const call: LlmCall = {
        workspaceId: ctx.workspaceId,
        traceId: traceIdFor(sessionId),
        spanId: spanIdFor(`qwen_session:${sessionId}:${responseId ?? endNs}`),
        parentSpanId: null,
        conversationId: sessionId,
        conversationSynthetic: false,
        agentId: null,
        streamKey,
        runId: sessionId,
        sideCall: side,
        requestId: responseId,
        startNs,
        endNs,
        producer: QWEN_SESSION_PRODUCER,
        provider: 'openai',
        requestModel: model,
        responseModel: model,
        ...usage,
        contextWindow: win.window,
        windowSource: win.source,
        agentVersion: str(rec, 'version'),
        finishReasonRaw: null,
        finishClass: null,
        outputToolCall: side === null ? null : false,
        outputToolName: null,
        maxOutputTokens: null,
        parts,
        compacted: false,
      };
      calls.push(call);
      last = call;
    } else if (rec['type'] === 'assistant' && last !== null && last.sideCall === null) {
      // the output and window of the call whose api_response came just before
      const out = outputOf(rec);
      last.outputToolCall = out.toolCall;
      last.outputToolName = out.name;
      const window = numOf(rec, 'contextWindowSize');
      if (window !== null && window > 0) {
        if (last.responseModel !== null) windows.set(last.responseModel, window);
        const win = reportedWindowFor(
          last.responseModel,
          window,
          last.contextTokens,
          ctx.windowOverrides,
        );
        last.contextWindow = win.window;
        last.windowSource = win.source;
      }
      last = null;
    } else if (rec['type'] === 'system' && subtype === 'chat_compression') {
      const info = isObj(payload['info']) ? payload['info'] : {};
      const before = numOf(info, 'originalTokenCount');
      const after = numOf(info, 'newTokenCount');
      if (before !== null && after !== null && after >= before) continue;
      const reason = str(info, 'triggerReason');
      compactions.push(
        compaction({
          workspaceId: ctx.workspaceId,
          conversationId: sessionId,
          streamKey,
          runId: sessionId,
          traceId: null,
          spanId: null,
          atNs,
          evidence: 'qwen_code_session',
          kind: 'summarize',
          trigger: reason === 'manual' ? 'manual' : reason === null ? null : 'auto',
          tokensBefore: before,
          sourceKey: `qwen_session:${sessionId}:compression:${str(rec, 'uuid') ?? atNs}`,
        }),
      );
    }
  }
  // side calls (no assistant record) and calls before the first record: the model's window
  for (const call of calls) {
    const window = call.responseModel === null ? undefined : windows.get(call.responseModel);
    if (window === undefined || call.windowSource === 'agent') continue;
    const win = reportedWindowFor(
      call.responseModel,
      window,
      call.contextTokens,
      ctx.windowOverrides,
    );
    call.contextWindow = win.window;
    call.windowSource = win.source;
  }
  return { calls, toolResults: [], compactions };
}

/** This module as the reader of its agent's session files (../model/agents/, `sessionFiles.reader`). */
export const sessionFileReader: SessionFileReader = {
  isEntry: isQwenSessionEntry,
  normalize: (text, ctx) => normalizeQwenSession(text, ctx),
};
