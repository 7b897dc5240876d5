/**
 * Gemini CLI chat files (`~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`, measured on
 * 0.61.0 with the real CLI: test/fixtures/real/gemini-cli-0.61.0-chats/) → LLM calls and
 * compactions. One JSON line per record:
 * - a header `{ sessionId, projectHash, startTime, lastUpdated, kind }` opens the file and is
 *   written again by every run that resumes the session (`--resume`), with the same session id;
 * - message records `{ id, timestamp, type, content, ... }`: `user` (a prompt, or the function
 *   responses sent back), and `gemini` (one per main-thread call: `tokens` {input (the cache
 *   included), output, cached, thoughts, tool, total} and `model`), written when the response
 *   ends and written again, same id, once its `toolCalls` ran (each with its `result`, the
 *   function responses the model gets in the next call);
 * - `$set` patches: `lastUpdated`, `sessionId`, and `messages` (the whole history, rewritten when a
 *   run resumes the session and when the CLI compresses it: the compressed history opens with a
 *   user message `<state_snapshot>…`, the summary, which is how a compression is seen here).
 * The file holds no finish reason (a cut output is not seen from it; the telemetry has it), no
 * side call (the router's and the compressor's calls are not written) and no request id.
 *
 * One session counted once: a chat file's calls have no id its telemetry shares, so the store
 * takes a session from one of the two: an import of a session that telemetry already stored
 * adds nothing (src/receiver/pipeline.ts, `GEMINI_SESSION_PRODUCER`).
 */
import type { Compaction, LlmCall, Normalized } from '../model/calls.ts';
import { field as str, isObj, isoToNs } from './attrs.ts';
import { compaction } from './compactions.ts';
import { streamKeyOf } from './conversation.ts';
import { spanIdFor, traceIdFor } from './ids.ts';
import { jsonObjectLines } from './json-lines.ts';
import { contextUsage } from './tokens.ts';
import { partsFromBytes } from './tool-parts.ts';
import type { NormalizeContext, SessionFileReader } from './types.ts';
import { reportedWindowFor } from './windows.ts';

/** The producer of calls read from Gemini CLI chat files. */
export const GEMINI_SESSION_PRODUCER = 'gemini_cli_session';

/** The opening record of a Gemini CLI chat file (Qwen Code's records carry `provenance` instead). */
export function isGeminiSessionEntry(v: unknown): boolean {
  return (
    isObj(v) &&
    typeof v['sessionId'] === 'string' &&
    typeof v['projectHash'] === 'string' &&
    typeof v['kind'] === 'string'
  );
}

/** True for a chat file's name: `session-<time>-<id>.jsonl` under a `chats` folder. */
export function isGeminiSessionPath(path: string): boolean {
  return /(^|[/\\])chats[/\\]session-[^/\\]*\.jsonl$/.test(path);
}

const numOf = (o: Record<string, unknown>, k: string): number | null => {
  const v = o[k];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
};

/** The characters of one function response the model gets (its `output`, else its JSON). */
function responseChars(part: unknown): number {
  const fr = isObj(part) && isObj(part['functionResponse']) ? part['functionResponse'] : null;
  if (fr === null) return 0;
  const response = fr['response'];
  if (isObj(response) && typeof response['output'] === 'string') return response['output'].length;
  return JSON.stringify(response ?? null).length;
}

/** The text of a message's first part (`content` is a string or Gemini parts). */
function firstText(content: unknown): string {
  if (typeof content === 'string') return content;
  const first = Array.isArray(content) ? content[0] : null;
  return isObj(first) && typeof first['text'] === 'string' ? first['text'] : '';
}

/** Normalizes one Gemini CLI chat file (see the module doc). */
export function normalizeGeminiSession(text: string, ctx: NormalizeContext): Normalized {
  const calls: LlmCall[] = [];
  const compactions: Compaction[] = [];
  const byMessage = new Map<string, LlmCall>();
  /** Messages whose tool results were counted (a `gemini` record is written twice). */
  const resultsCounted = new Set<string>();
  const snapshots = new Set<string>();
  let sessionId: string | null = null;
  let agentId: string | null = null;
  let pendingTools: Record<string, number> = {};
  let last: LlmCall | null = null;
  for (const rec of jsonObjectLines(text)) {
    if (isGeminiSessionEntry(rec)) {
      sessionId = rec['sessionId'] as string;
      // the main session's file; any other kind is read as a stream of its own
      agentId = rec['kind'] === 'main' ? null : (rec['kind'] as string);
      continue;
    }
    if (sessionId === null) continue;
    const streamKey = streamKeyOf(sessionId, agentId);
    const set = isObj(rec['$set']) ? rec['$set'] : null;
    if (set !== null) {
      if (!Array.isArray(set['messages'])) continue;
      for (const m of set['messages']) {
        if (!isObj(m) || m['type'] !== 'user' || typeof m['id'] !== 'string') continue;
        if (!firstText(m['content']).startsWith('<state_snapshot>') || snapshots.has(m['id']))
          continue;
        snapshots.add(m['id']);
        const atNs = isoToNs(str(m, 'timestamp'));
        if (atNs === null) continue;
        compactions.push(
          compaction({
            workspaceId: ctx.workspaceId,
            conversationId: sessionId,
            streamKey,
            runId: sessionId,
            traceId: null,
            spanId: null,
            atNs,
            evidence: 'gemini_cli_session',
            kind: 'summarize',
            trigger: null,
            tokensBefore: last?.contextTokens ?? null,
            sourceKey: `gemini_session:${sessionId}:compression:${m['id']}`,
          }),
        );
      }
      continue;
    }
    const id = str(rec, 'id');
    if (id === null || rec['type'] !== 'gemini') continue;
    const toolCalls = Array.isArray(rec['toolCalls']) ? rec['toolCalls'] : [];
    let call = byMessage.get(id);
    if (call === undefined) {
      const tokens = isObj(rec['tokens']) ? rec['tokens'] : null;
      const input = tokens === null ? null : numOf(tokens, 'input');
      const atNs = isoToNs(str(rec, 'timestamp'));
      if (input === null || atNs === null) continue;
      const model = str(rec, 'model');
      const usage = contextUsage(
        {
          inputTokensRaw: input,
          cacheReadTokens: numOf(tokens!, 'cached'),
          cacheWriteTokens: null,
          outputTokens: numOf(tokens!, 'output'),
          inputKey: null,
        },
        'unknown',
      );
      const win = reportedWindowFor(model, null, usage.contextTokens, ctx.windowOverrides);
      const parts =
        Object.keys(pendingTools).length > 0 ? partsFromBytes(pendingTools, null) : null;
      pendingTools = {};
      call = {
        workspaceId: ctx.workspaceId,
        traceId: traceIdFor(sessionId),
        spanId: spanIdFor(`gemini_session:${sessionId}:${id}`),
        parentSpanId: null,
        conversationId: sessionId,
        conversationSynthetic: false,
        agentId,
        streamKey,
        runId: sessionId,
        sideCall: null,
        requestId: null,
        startNs: atNs,
        endNs: atNs,
        producer: GEMINI_SESSION_PRODUCER,
        provider: 'gcp.gen_ai',
        requestModel: model,
        responseModel: model,
        ...usage,
        contextWindow: win.window,
        windowSource: win.source,
        agentVersion: null,
        finishReasonRaw: null,
        finishClass: null,
        outputToolCall: toolCalls.length > 0,
        outputToolName: null,
        maxOutputTokens: null,
        parts,
        compacted: false,
      };
      byMessage.set(id, call);
      calls.push(call);
      last = call;
    }
    if (toolCalls.length === 0) continue;
    // the record written once its tools ran: what the call asked for, and what the next gets
    call.outputToolCall = true;
    const lastTool = toolCalls.at(-1);
    call.outputToolName = isObj(lastTool) ? str(lastTool, 'name') : null;
    if (resultsCounted.has(id)) continue;
    resultsCounted.add(id);
    for (const tc of toolCalls) {
      if (!isObj(tc)) continue;
      const name = str(tc, 'name') ?? 'unknown';
      const results = Array.isArray(tc['result']) ? tc['result'] : [];
      const chars = results.reduce<number>((n, part) => n + responseChars(part), 0);
      pendingTools[name] = (pendingTools[name] ?? 0) + chars;
    }
  }
  return { calls, toolResults: [], compactions };
}

/** This module as the reader of its agent's session files (../model/agents/, `sessionFiles.reader`). */
export const sessionFileReader: SessionFileReader = {
  isEntry: isGeminiSessionEntry,
  isPath: isGeminiSessionPath,
  normalize: (text, ctx) => normalizeGeminiSession(text, ctx),
};
