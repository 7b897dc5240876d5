/**
 * Joins Claude Code's logged tool results (and Codex's `codex.tool_result`, the same way:
 * src/ingest/codex.ts) to the calls whose input they entered (conventions §5.0): a `tool_result` log event's bytes enter the input of the next main-thread call of the
 * session, or the next call of the same sub-agent, after it. Logs and spans are exported on
 * separate schedules, so either side may be stored first: this runs after each batch, for the
 * calls the batch touched, and fills (or refreshes) those calls' `parts` with the results logged
 * since their stream's previous call, in estimated tokens (src/ingest/tool-parts.ts). The event
 * carries no agent id; the `claude_code.tool` span with the same `tool_use_id` says which agent
 * ran the tool (else the main thread). Returns marks for the calls it changed, so conversations
 * already evaluated are evaluated again from there.
 */
import { partsFromBytes } from '../ingest/tool-parts.ts';
import {
  isLoggedToolResultSource,
  LOGGED_TOOL_RESULT_PRODUCERS,
  LOGGED_TOOL_RESULT_SOURCES,
} from '../ingest/producers.ts';
import type { LlmCall, ToolResult } from '../model/calls.ts';
import type { IngestMark } from '../store/conversations.ts';
import type { Db } from '../store/db.ts';
import {
  loggedSince,
  nextCall,
  resultStreams,
  setCallParts,
  type ToolPartsTarget,
} from '../store/logged-tool-results.ts';

/** True when two tallies of tool results hold the same tools with the same sizes. */
export function sameTools(a: Record<string, number>, b: Record<string, number>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

/** A call's key among the targets: its trace and span id. */
export const targetKey = (t: { traceId: string; spanId: string }) => `${t.traceId}:${t.spanId}`;

/**
 * The calls of a batch whose parts logged tool results may fill, by {@link targetKey}: the
 * main-thread ones (no side call) that carry a token count.
 */
export function callTargets(calls: readonly LlmCall[]): Map<string, ToolPartsTarget> {
  const targets = new Map<string, ToolPartsTarget>();
  for (const c of calls) {
    if (c.sideCall !== null || c.contextTokens === null) continue;
    targets.set(targetKey(c), {
      conversationId: c.conversationId,
      streamKey: c.streamKey,
      traceId: c.traceId,
      spanId: c.spanId,
      startNs: c.startNs,
      parts: c.parts,
    });
  }
  return targets;
}

/**
 * Fills the parts of the Claude Code calls touched by a batch (its new calls, and the next
 * call after each of its logged or span tool results) from the tool results logged before
 * them. Calls whose parts came from message content are left alone.
 */
export async function joinLoggedToolResults(
  db: Db,
  workspaceId: string,
  batch: { calls: readonly LlmCall[]; toolResults: readonly ToolResult[] },
): Promise<IngestMark[]> {
  const targets = callTargets(
    batch.calls.filter((c) => LOGGED_TOOL_RESULT_PRODUCERS.includes(c.producer)),
  );
  const logged = batch.toolResults.filter((r) => isLoggedToolResultSource(r.source));
  for (const at of await resultStreams(db, workspaceId, logged)) {
    const next = await nextCall(db, workspaceId, at, LOGGED_TOOL_RESULT_PRODUCERS);
    if (next !== undefined) targets.set(targetKey(next), next);
  }

  const marks: IngestMark[] = [];
  for (const t of targets.values()) {
    // sizes from message content, or exact tokens from tool spans (`result_tokens`), win
    if (t.parts !== null && t.parts.source !== 'tool_spans') continue;
    if (t.parts?.estimatedFrom === undefined && Object.keys(t.parts?.tools ?? {}).length > 0)
      continue;
    const bytes = await loggedSince(db, workspaceId, t, LOGGED_TOOL_RESULT_SOURCES);
    const parts = partsFromBytes(bytes, null);
    // the system prompt's size (detailed beta tracing) stays as the span said
    parts.system = t.parts?.system ?? null;
    if (t.parts !== null && sameTools(t.parts.tools, parts.tools) && t.parts.estimatedFrom)
      continue;
    if (t.parts === null && Object.keys(parts.tools).length === 0) continue;
    for (const row of await setCallParts(db, workspaceId, t, parts)) {
      marks.push({ conversationId: row.conversationId, fromNs: row.startNs, calls: 0 });
    }
  }
  return marks;
}
