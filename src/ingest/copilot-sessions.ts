/**
 * GitHub Copilot CLI session files (`$COPILOT_HOME/session-state/<session id>/events.jsonl`,
 * measured on 1.0.102, ../shared/agents.md) → LLM calls, tool results and compactions. One JSON
 * line per event `{ type, data, id, timestamp, parentId }`; a session resumed with `--continue`
 * appends to the same file:
 * - `session.start`: the session id (= telemetry `gen_ai.conversation.id`), `copilotVersion`,
 *   `context.cwd` / `gitRoot`; `system.message`: the system prompt as sent;
 * - `session.usage_record`: one per model request, written when it ends: `usage` with `model`,
 *   `inputTokens` (cache included), `cacheReadTokens`, `cacheWriteTokens`, `outputTokens`,
 *   `duration` (ms), `maxPromptTokens` (Copilot's own window: 64,000 for gpt-4o),
 *   `maxOutputTokens`, and `apiCallId`: the response id, the same as the `chat` span's
 *   `gen_ai.response.id`, so one request read from both is one call;
 * - `assistant.message` (after its usage record, same `apiCallId`): `toolRequests` (name,
 *   arguments: `{}` for a call whose arguments were cut and cleared);
 * - `tool.execution_start` / `tool.execution_complete`: the tool's name, its result as the model
 *   gets it (`result.content`), or an error (`toolTelemetry.properties.wasSyntaxError` for cut
 *   arguments); the results go with the next usage record;
 * - `session.compaction_complete` (`success`, `preCompactionTokens`, `postCompactionTokens`,
 *   `summaryContent`, `trigger`); its summary request is not a usage record.
 * The file says no finish reason: a response whose output tokens reached `maxOutputTokens` was
 * cut (`length`); otherwise `tool_calls` or `stop` from its message.
 */
import {
  latestProjects,
  type Compaction,
  type ConversationProject,
  type LlmCall,
  type Normalized,
} from '../model/calls.ts';
import { isObj, minusMs, msToNs, numField } from './attrs.ts';
import { codexUsage } from './codex.ts';
import { compaction, normalizeTrigger } from './compactions.ts';
import { streamKeyOf } from './conversation.ts';
import { classifyFinishReason } from './finish.ts';
import { spanIdFor, traceIdFor } from './ids.ts';
import { jsonObjectLines } from './json-lines.ts';
import { projectReport } from './projects.ts';
import { partsFromBytes } from './tool-parts.ts';
import type { NormalizeContext, SessionFileReader } from './types.ts';
import { reportedWindowFor } from './windows.ts';

/** The producer of calls read from Copilot CLI session files. */
export const COPILOT_SESSION_PRODUCER = 'copilot_session';

/** Event type families of a Copilot session file (dotted; a Claude Code transcript's types have no dot). */
const FAMILIES = /^(session|user|assistant|tool|system|subagent|hook|skill|pending_messages)\./;

/** True when a parsed JSON line is a Copilot CLI session event. */
export function isCopilotSessionEntry(v: unknown): boolean {
  return (
    isObj(v) &&
    typeof v['type'] === 'string' &&
    FAMILIES.test(v['type']) &&
    isObj(v['data']) &&
    typeof v['timestamp'] === 'string'
  );
}

/** True for a path named like a Copilot session file (`session-state/<id>/events.jsonl`). */
export function isCopilotSessionPath(path: string): boolean {
  return /(^|[\\/])session-state[\\/][^\\/]+[\\/]events\.jsonl$/.test(path);
}

type Entry = Record<string, unknown>;

const s = (o: Entry, k: string): string | null => {
  const v = o[k];
  return typeof v === 'string' && v !== '' ? v : null;
};

function tsMs(line: Entry): number | null {
  const t = s(line, 'timestamp');
  const ms = t === null ? NaN : Date.parse(t);
  return Number.isFinite(ms) ? ms : null;
}

/** Characters of a tool result as the model gets it. */
function resultChars(result: unknown): number {
  if (typeof result === 'string') return result.length;
  if (isObj(result) && typeof result['content'] === 'string') return result['content'].length;
  return 0;
}

/**
 * Normalizes one Copilot CLI session file (see the module doc). Lines that are not Copilot
 * events are skipped. `path` gives the session id when the file has no `session.start` line.
 */
export function normalizeCopilotSession(
  text: string,
  ctx: NormalizeContext,
  path = '',
): Normalized {
  const calls: LlmCall[] = [];
  // tool results are not rows of their own here (their telemetry spans would be counted again):
  // their sizes are the next call's parts
  const compactions: Compaction[] = [];
  const projects: ConversationProject[] = [];
  let sessionId =
    /session-state[\\/]([^\\/]+)[\\/]events\.jsonl$/.exec(path)?.[1] ?? 'unknown-session';
  let version: string | null = null;
  let system: number | null = null;
  const toolNames = new Map<string, string>();
  let pending: Record<string, number> = {};
  const byApiCall = new Map<string, number>();
  const streamKey = () => streamKeyOf(sessionId, null);

  for (const line of jsonObjectLines(text)) {
    if (!isCopilotSessionEntry(line)) continue;
    const type = line['type'] as string;
    const d = line['data'] as Entry;
    const ms = tsMs(line);
    const atNs = ms === null ? '0' : msToNs(ms);
    if (type === 'session.start') {
      sessionId = s(d, 'sessionId') ?? sessionId;
      version = s(d, 'copilotVersion') ?? version;
      const c = isObj(d['context']) ? d['context'] : {};
      projects.push(...projectReport(sessionId, s(c, 'gitRoot') ?? s(c, 'cwd'), atNs));
    } else if (type === 'system.message') {
      if (typeof d['content'] === 'string') system = d['content'].length;
    } else if (type === 'tool.execution_start') {
      const id = s(d, 'toolCallId');
      const name = s(d, 'toolName');
      if (id !== null && name !== null) toolNames.set(id, name);
    } else if (type === 'tool.execution_complete') {
      const id = s(d, 'toolCallId');
      const name = (id !== null ? toolNames.get(id) : undefined) ?? 'unknown';
      pending[name] = (pending[name] ?? 0) + resultChars(d['result']);
    } else if (type === 'session.usage_record') {
      const u = isObj(d['usage']) ? d['usage'] : null;
      if (u === null) continue;
      const input = numField(u, 'inputTokens');
      const output = numField(u, 'outputTokens');
      const maxOut = numField(u, 'maxOutputTokens');
      const usage = codexUsage(
        input,
        numField(u, 'cacheReadTokens'),
        numField(u, 'cacheWriteTokens'),
        output,
      );
      const model = s(u, 'model');
      const win = reportedWindowFor(
        model,
        numField(u, 'maxPromptTokens'),
        usage.contextTokens,
        ctx.windowOverrides,
      );
      const apiCallId = s(u, 'apiCallId');
      const cut = output !== null && maxOut !== null && output >= maxOut;
      const duration = numField(u, 'duration') ?? 0;
      const call: LlmCall = {
        workspaceId: ctx.workspaceId,
        traceId: traceIdFor(sessionId),
        spanId: spanIdFor(`copilot_session:${sessionId}:${apiCallId ?? atNs}`),
        parentSpanId: null,
        conversationId: sessionId,
        conversationSynthetic: false,
        agentId: null,
        streamKey: streamKey(),
        runId: sessionId,
        sideCall: null,
        requestId: apiCallId,
        startNs: ms === null ? atNs : minusMs(atNs, duration),
        endNs: atNs,
        producer: COPILOT_SESSION_PRODUCER,
        provider: null,
        requestModel: model,
        responseModel: model,
        ...usage,
        contextWindow: win.window,
        windowSource: win.source,
        agentVersion: version,
        finishReasonRaw: cut ? 'length' : null,
        finishClass: cut ? classifyFinishReason('length') : null,
        outputToolCall: null,
        outputToolName: null,
        maxOutputTokens: maxOut,
        // what the tools gave the model since its last call, and the system prompt
        parts: partsFromBytes(pending, system),
        compacted: false,
      };
      pending = {};
      if (apiCallId !== null) byApiCall.set(apiCallId, calls.length);
      calls.push(call);
    } else if (type === 'assistant.message') {
      const apiCallId = s(d, 'apiCallId');
      const i = apiCallId === null ? undefined : byApiCall.get(apiCallId);
      if (i === undefined) continue;
      const call = calls[i]!;
      const requests = Array.isArray(d['toolRequests']) ? d['toolRequests'].filter(isObj) : [];
      const toolCall = requests.length > 0;
      const name = toolCall ? s(requests.at(-1)!, 'name') : null;
      const finish = call.finishReasonRaw ?? (toolCall ? 'tool_calls' : 'stop');
      calls[i] = {
        ...call,
        finishReasonRaw: finish,
        finishClass: classifyFinishReason(finish),
        outputToolCall: toolCall,
        outputToolName: name,
      };
    } else if (type === 'session.compaction_complete') {
      if (d['success'] === false) continue;
      const summary = s(d, 'summaryContent');
      compactions.push(
        compaction({
          workspaceId: ctx.workspaceId,
          conversationId: sessionId,
          streamKey: streamKey(),
          runId: sessionId,
          traceId: traceIdFor(sessionId),
          spanId: spanIdFor(
            `copilot_session:${sessionId}:compaction:${s(d, 'compactionAttemptId') ?? atNs}`,
          ),
          atNs,
          evidence: 'transcript_boundary',
          sourceKey: `copilot_session:${sessionId}:${s(d, 'compactionAttemptId') ?? atNs}`,
          trigger: normalizeTrigger(d['trigger'] as string | undefined),
          tokensBefore: numField(d, 'preCompactionTokens'),
          tokensAfter: numField(d, 'postCompactionTokens'),
          summarySize: summary === null ? null : summary.length,
          summary: ctx.captureContent ? summary : null,
        }),
      );
    }
  }
  // a call whose output nothing recorded (a text cut before any message): text
  for (const [i, call] of calls.entries())
    if (call.outputToolCall === null && call.finishReasonRaw === 'length')
      calls[i] = { ...call, outputToolCall: false };
  return { calls, toolResults: [], compactions, projects: latestProjects(projects) };
}

/** This module as the reader of its agent's session files (../model/agents/, `sessionFiles.reader`). */
export const sessionFileReader: SessionFileReader = {
  isEntry: isCopilotSessionEntry,
  isPath: isCopilotSessionPath,
  normalize: normalizeCopilotSession,
};
