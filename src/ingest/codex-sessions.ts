/**
 * Codex CLI session files (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`, measured
 * on 0.171.0, conventions §5.0.2) → LLM calls, tool results and compactions. One JSON line per
 * entry `{ timestamp, type, payload }`:
 * - `session_meta`: the session (= thread, = telemetry `conversation.id`) id and `cli_version`;
 *   a resumed session appends to the same file;
 * - `event_msg` `task_started`: a turn, with the telemetry `trace_id` of the turn and
 *   `model_context_window` (what Codex says is usable: 258,400 of gpt-5.5's 272,000);
 *   `turn_context`: the turn's model;
 * - `token_usage_record`: one per response (`response_id`, `usage` with `input_tokens` including
 *   `cached_input_tokens`), also for a response cut at its output limit. Older files without it:
 *   `event_msg` `token_count` (`last_token_usage`), one per new `total_token_usage`;
 * - `response_item`: the model's output (`function_call`, `custom_tool_call`, `message`, ...)
 *   comes before the response's usage record; the tools' output (`function_call_output`, what
 *   the model got, exactly) after it, so both belong to the next record;
 * - `compacted`: a compaction (`compaction_response_id` names the summarising request: a side
 *   call; `replacement_history` is what was kept);
 * - the turn's error "Incomplete response returned, reason: max_output_tokens" (`task_complete`
 *   / `turn_aborted` `error`, or an `error` event): the turn's last response was cut. The file
 *   does not keep the cut output, so whether it was a tool call is unknown.
 * Calls have the same request identity as their telemetry (`codexRequestId`: the turn's trace id
 * and the token counts), so one request read from both is one call.
 */
import {
  latestProjects,
  type Compaction,
  type ConversationProject,
  type InputParts,
  type LlmCall,
  type Normalized,
  type ToolResult,
} from '../model/calls.ts';
import { isObj, isoToNs, numField } from './attrs.ts';
import { codexCompactionKey, codexRequestId, codexToolResultSpanId, codexUsage } from './codex.ts';
import { compaction } from './compactions.ts';
import { streamKeyOf } from './conversation.ts';
import { classifyFinishReason } from './finish.ts';
import { spanIdFor, traceIdFor } from './ids.ts';
import { partsFromBytes } from './tool-parts.ts';
import { projectReport } from './projects.ts';
import type { NormalizeContext, SessionFileReader } from './types.ts';
import { reportedWindowFor } from './windows.ts';
import { jsonObjectLines } from './json-lines.ts';

/** The producer of calls read from Codex session files. */
export const CODEX_SESSION_PRODUCER = 'codex_session';

/** Entry types of a Codex session file (a Claude Code transcript has none of them with a `payload`). */
const ENTRY_TYPES = new Set([
  'session_meta',
  'event_msg',
  'response_item',
  'turn_context',
  'token_usage_record',
  'compacted',
  'world_state',
]);

/** True when a parsed JSON line is a Codex session-file entry. */
export function isCodexSessionEntry(v: unknown): boolean {
  return (
    isObj(v) && typeof v['type'] === 'string' && ENTRY_TYPES.has(v['type']) && isObj(v['payload'])
  );
}

/** True for a path named like a Codex session file (`rollout-*.jsonl`). */
export function isCodexSessionPath(path: string): boolean {
  return /(^|[\\/])rollout-[^\\/]*\.jsonl$/.test(path);
}

/** The session id in a session file's name (`rollout-<time>-<uuid>.jsonl`), or null. */
export function sessionIdFromPath(path: string): string | null {
  const m =
    /rollout-.*?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i.exec(path);
  return m?.[1] ?? null;
}

const INCOMPLETE = /Incomplete response returned, reason: ([A-Za-z_]+)/;

/** Output items of a response (written before its usage record). */
const CALL_ITEMS = new Set(['function_call', 'custom_tool_call', 'local_shell_call']);
/** Tool output items (the model gets them with its next request). */
const OUTPUT_ITEMS = new Set(['function_call_output', 'custom_tool_call_output']);

type Entry = Record<string, unknown>;

function s(o: Entry, k: string): string | null {
  const v = o[k];
  return typeof v === 'string' && v !== '' ? v : null;
}

function tsNs(line: Entry): string {
  return isoToNs(s(line, 'timestamp')) ?? '0';
}

/** Characters of a tool output item's `output` as the model gets it (a string, or content parts). */
function outputChars(output: unknown): number {
  if (typeof output === 'string') return output.length;
  if (Array.isArray(output)) {
    let n = 0;
    for (const part of output)
      if (isObj(part) && typeof part['text'] === 'string') n += part['text'].length;
    return n;
  }
  if (isObj(output) && typeof output['content'] === 'string') return output['content'].length;
  return 0;
}

/** The usage counts of a `usage` / `last_token_usage` object; null when absent or all zero. */
function usageOf(u: unknown) {
  if (!isObj(u)) return null;
  const input = numField(u, 'input_tokens');
  if (input === null || input === 0) return null;
  return {
    input,
    cached: numField(u, 'cached_input_tokens'),
    cacheWrite: numField(u, 'cache_write_input_tokens'),
    output: numField(u, 'output_tokens'),
  };
}

/** What the reader knows while it walks the file. */
interface State {
  sessionId: string;
  version: string | null;
  model: string | null;
  window: number | null;
  turnId: string | null;
  traceId: string | null;
  /** The calls of the current turn, in order. */
  turnCalls: LlmCall[];
  /** Compactions so far in the current turn. */
  turnCompactions: number;
  /** Whether the current turn's cut-off was applied. */
  turnCut: boolean;
  /** Tool outputs since the last main-thread call, by tool name: characters. */
  pendingTools: Record<string, number>;
  /** The next call's output: a tool call (and its name) or text, when seen. */
  pendingOutput: { toolCall: boolean; toolName: string | null } | null;
  /** The next usage record is a compaction's (its summary message was marked so). */
  pendingCompactionOutput: boolean;
  toolNames: Map<string, string>;
  callsByResponse: Map<string, LlmCall>;
  /** token_count fallback: the last `total_token_usage.total_tokens` seen. */
  lastTotal: number | null;
}

/**
 * Normalizes one Codex session file (see the module doc). Lines that are not JSON objects are
 * skipped. `path` gives the session id when the file has no `session_meta` line.
 */
export function normalizeCodexSession(text: string, ctx: NormalizeContext, path = ''): Normalized {
  const calls: LlmCall[] = [];
  const toolResults: ToolResult[] = [];
  const compactions: Compaction[] = [];
  const lines: Entry[] = [];
  let usageRecords = false;
  for (const line of jsonObjectLines(text)) {
    if (!isCodexSessionEntry(line)) continue;
    const entry = line as Entry;
    if (entry['type'] === 'token_usage_record') usageRecords = true;
    lines.push(entry);
  }

  const st: State = {
    sessionId: sessionIdFromPath(path) ?? 'unknown-session',
    version: null,
    model: null,
    window: null,
    turnId: null,
    traceId: null,
    turnCalls: [],
    turnCompactions: 0,
    turnCut: false,
    pendingTools: {},
    pendingOutput: null,
    pendingCompactionOutput: false,
    toolNames: new Map(),
    callsByResponse: new Map(),
    lastTotal: null,
  };
  const projects: ConversationProject[] = [];
  for (const line of lines) {
    const type = line['type'] as string;
    const p = line['payload'] as Entry;
    const atNs = tsNs(line);
    if (type === 'session_meta') {
      st.sessionId = s(p, 'id') ?? s(p, 'session_id') ?? st.sessionId;
      st.version = s(p, 'cli_version') ?? st.version;
      const git = isObj(p['git']) ? p['git'] : {};
      projects.push(...projectReport(st.sessionId, s(git, 'repository_url') ?? s(p, 'cwd'), atNs));
    } else if (type === 'turn_context') {
      st.model = s(p, 'model') ?? st.model;
    } else if (type === 'token_usage_record') {
      const u = usageOf(p['usage']);
      if (u !== null) calls.push(newCall(st, ctx, u, s(p, 'response_id'), atNs));
    } else if (type === 'response_item') {
      readItem(st, ctx, line, atNs, toolResults);
    } else if (type === 'compacted') {
      compactions.push(readCompaction(st, ctx, p, atNs));
    } else if (type === 'event_msg') {
      const kind = s(p, 'type');
      if (kind === 'task_started') {
        st.turnId = s(p, 'turn_id') ?? st.turnId;
        st.traceId = s(p, 'trace_id');
        st.window = numField(p, 'model_context_window') ?? st.window;
        st.turnCalls = [];
        st.turnCompactions = 0;
        st.turnCut = false;
      } else if (kind === 'token_count') {
        const info = isObj(p['info']) ? p['info'] : null;
        if (info === null) continue;
        st.window = numField(info, 'model_context_window') ?? st.window;
        if (usageRecords) continue;
        // older files: one token_count per response (a repeated total is the same response)
        const total = isObj(info['total_token_usage'])
          ? numField(info['total_token_usage'], 'total_tokens')
          : null;
        const u = usageOf(info['last_token_usage']);
        if (u === null || total === st.lastTotal) continue;
        st.lastTotal = total;
        calls.push(newCall(st, ctx, u, null, atNs));
      }
      readError(st, p);
    }
  }
  // a session file without session_meta learns its id from the path only: projects name it last
  const named = projects.map((report) => ({ ...report, conversationId: st.sessionId }));
  return { calls, toolResults, compactions, projects: latestProjects(named) };
}

/** The window of a session-file call: an override, else what Codex reported, else the catalog. */
function windowOf(st: State, ctx: NormalizeContext, tokens: number | null) {
  return reportedWindowFor(st.model, st.window, tokens, ctx.windowOverrides);
}

function newCall(
  st: State,
  ctx: NormalizeContext,
  u: NonNullable<ReturnType<typeof usageOf>>,
  responseId: string | null,
  atNs: string,
): LlmCall {
  const usage = codexUsage(u.input, u.cached, u.cacheWrite, u.output);
  const win = windowOf(st, ctx, usage.contextTokens);
  const sideCall = st.pendingCompactionOutput ? 'compact' : null;
  const toolNames = Object.keys(st.pendingTools);
  let parts: InputParts | null = null;
  if (sideCall === null) {
    // what the tools gave the model since its last call, as Codex's telemetry reports it
    if (toolNames.length > 0) parts = partsFromBytes(st.pendingTools, null);
    st.pendingTools = {};
  }
  const traceId = st.traceId ?? traceIdFor(`${st.sessionId}:${st.turnId ?? ''}`);
  const output = st.pendingOutput;
  const call: LlmCall = {
    workspaceId: ctx.workspaceId,
    traceId,
    spanId: spanIdFor(`codex_session:${st.sessionId}:${responseId ?? atNs}`),
    parentSpanId: null,
    conversationId: st.sessionId,
    conversationSynthetic: false,
    agentId: null,
    streamKey: streamKeyOf(st.sessionId, null),
    runId: st.sessionId,
    sideCall,
    requestId: st.traceId === null ? null : codexRequestId(st.traceId, u.input, u.cached, u.output),
    startNs: atNs,
    endNs: atNs,
    producer: CODEX_SESSION_PRODUCER,
    provider: null,
    requestModel: st.model,
    responseModel: st.model,
    ...usage,
    contextWindow: win.window,
    windowSource: win.source,
    agentVersion: st.version,
    finishReasonRaw: null,
    finishClass: null,
    outputToolCall: output === null ? null : output.toolCall,
    outputToolName: output?.toolName ?? null,
    maxOutputTokens: null,
    parts,
    compacted: false,
  };
  st.pendingOutput = null;
  st.pendingCompactionOutput = false;
  st.turnCalls.push(call);
  if (responseId !== null) st.callsByResponse.set(responseId, call);
  return call;
}

function readItem(
  st: State,
  ctx: NormalizeContext,
  line: Entry,
  atNs: string,
  toolResults: ToolResult[],
): void {
  const p = line['payload'] as Entry;
  const kind = s(p, 'type');
  if (kind === null) return;
  if (CALL_ITEMS.has(kind)) {
    const name = s(p, 'name') ?? (kind === 'local_shell_call' ? 'local_shell' : 'unknown');
    const callId = s(p, 'call_id');
    if (callId !== null) st.toolNames.set(callId, name);
    st.pendingOutput = { toolCall: true, toolName: name };
  } else if (kind === 'message' && s(p, 'role') === 'assistant') {
    st.pendingOutput ??= { toolCall: false, toolName: null };
    // the summary of a compaction is marked so on its line
    const meta = isObj(line['metadata']) ? line['metadata'] : null;
    if (meta?.['compaction_output'] === true) st.pendingCompactionOutput = true;
  } else if (OUTPUT_ITEMS.has(kind)) {
    const callId = s(p, 'call_id');
    const name = (callId !== null ? st.toolNames.get(callId) : undefined) ?? 'unknown';
    const chars = outputChars(p['output']);
    st.pendingTools[name] = (st.pendingTools[name] ?? 0) + chars;
    if (callId === null) return;
    toolResults.push({
      workspaceId: ctx.workspaceId,
      traceId: st.traceId ?? traceIdFor(st.sessionId),
      spanId: codexToolResultSpanId(st.sessionId, callId),
      conversationId: st.sessionId,
      streamKey: streamKeyOf(st.sessionId, null),
      toolName: name,
      toolCallId: callId,
      resultSize: chars,
      sizeUnit: 'chars',
      atNs,
      source: 'codex_session',
    });
  }
}

function readCompaction(st: State, ctx: NormalizeContext, p: Entry, atNs: string): Compaction {
  // the summarising request is a side call, not the stream's next call
  const responseId = s(p, 'compaction_response_id');
  const summariser = responseId === null ? undefined : st.callsByResponse.get(responseId);
  if (summariser !== undefined) summariser.sideCall = 'compact';
  const before = [...st.turnCalls].reverse().find((c) => c.sideCall === null);
  const kept = p['replacement_history'];
  const message = s(p, 'message');
  st.turnCompactions += 1;
  const turnId = st.turnId ?? st.traceId ?? 'no-turn';
  return compaction({
    workspaceId: ctx.workspaceId,
    conversationId: st.sessionId,
    streamKey: streamKeyOf(st.sessionId, null),
    runId: st.sessionId,
    traceId: st.traceId,
    spanId: null,
    atNs,
    evidence: 'transcript_boundary',
    sourceKey: codexCompactionKey(st.sessionId, turnId, st.turnCompactions),
    tokensBefore: before?.contextTokens ?? null,
    messagesKept: Array.isArray(kept) ? kept.length : null,
    summarySize: message?.length ?? null,
    summary: ctx.captureContent ? message : null,
  });
}

/** A turn's error that says its response was cut: the turn's last call is the cut one. */
function readError(st: State, p: Entry): void {
  if (st.turnCut) return;
  const error = isObj(p['error']) ? p['error'] : null;
  const message =
    (error !== null ? s(error, 'message') : null) ??
    (s(p, 'type') === 'error' ? s(p, 'message') : null);
  if (message === null) return;
  const m = INCOMPLETE.exec(message);
  if (m === null) return;
  // the cut response wrote no output item; a completed one always did
  const last = st.turnCalls.at(-1);
  if (last === undefined || last.outputToolCall !== null) return;
  st.turnCut = true;
  last.finishReasonRaw = m[1] ?? null;
  last.finishClass = classifyFinishReason(last.finishReasonRaw);
}

/** This module as the reader of its agent's session files (../model/agents/, `sessionFiles.reader`). */
export const sessionFileReader: SessionFileReader = {
  isEntry: isCodexSessionEntry,
  isPath: isCodexSessionPath,
  normalize: normalizeCodexSession,
};
