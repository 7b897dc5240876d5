/**
 * Gemini CLI's evidence across its two signals (src/ingest/gemini.ts for what it sends): the
 * `llm_call` spans are the calls; its logs say which calls are side calls (`role`), how each
 * ended (`api_response` finish reasons) and how big each tool result was (`tool_call`). Logs and
 * spans are exported on separate schedules, so either may be stored first:
 * - a log batch joins its streamed responses that found no request in the batch to a stored
 *   `api_request` (before the records are stored, so they are stored joined), then applies its
 *   facts to the calls already stored;
 * - a span batch applies the facts of the stored records of its calls (the request, and the
 *   response joined to it).
 * Tool results logged since a stream's previous main-thread call fill the next main-thread
 * call's parts (estimated tokens, as for Claude Code's logged results), again after a call turns
 * out to be a side call (the compressor's calls run between a tool result and the next turn).
 * Everything returns marks for the calls it changed, so conversations are evaluated again.
 */
import type { LogBatch } from '../ingest/claude-code-logs.ts';
import {
  GEMINI_PRODUCER,
  GEMINI_TOOL_LOG_SOURCE,
  geminiFactsFromLogs,
  geminiSideCall,
  joinResponse,
  type GeminiCallFacts,
} from '../ingest/gemini.ts';
import { partsFromBytes } from '../ingest/tool-parts.ts';
import type { LlmCall, ToolResult } from '../model/calls.ts';
import type { LogRecord } from '../model/telemetry.ts';
import type { IngestMark } from '../store/conversations.ts';
import type { Db } from '../store/db.ts';
import {
  applyGeminiCallFacts,
  loggedResultsSince,
  marksOf,
  storedGeminiRequests,
  type CallFactsUpdate,
  type ChangedCall,
} from '../store/gemini.ts';
import { nextCall, setCallParts } from '../store/logged-tool-results.ts';
import { callTargets, sameTools, targetKey } from './logged-tool-parts.ts';

const GEMINI_PRODUCERS: readonly string[] = [GEMINI_PRODUCER];

/** True for a call of Gemini CLI's spans. */
export const isGeminiCall = (call: Pick<LlmCall, 'producer'>) => call.producer === GEMINI_PRODUCER;

/**
 * The conversations a log batch's Gemini CLI evidence completes: its transaction waits for a
 * span batch of the same session (and the other way round), so each sees the other's rows.
 */
export function geminiEvidenceKeys(workspaceId: string, batch: LogBatch): string[] {
  const g = batch.gemini;
  if (g === null) return [];
  const ids = new Set<string>([
    ...g.facts.map((f) => f.conversationId),
    ...g.pending.map((p) => p.key.sessionId),
    ...g.toolResults.map((r) => r.conversationId),
  ]);
  return [...ids].map((id) => `conversation:${workspaceId}:${id}`);
}

/**
 * Joins the batch's streamed responses left pending by the normalizer to stored requests: each
 * gets the latest unanswered stored request of its key, and is stored with its trace and span
 * id. Changes `batch.keep` and `batch.gemini.facts`; run before the records are stored.
 */
export async function joinPendingGeminiResponses(
  db: Db,
  workspaceId: string,
  batch: LogBatch,
): Promise<void> {
  const gemini = batch.gemini;
  if (gemini === null || gemini.pending.length === 0) return;
  const taken = new Set(gemini.facts.map((f) => `${f.traceId}:${f.spanId}`));
  for (const p of gemini.pending) {
    const found = await storedGeminiRequests(db, workspaceId, p.key, p.notBeforeNs, p.atNs);
    const q = found.find((r) => !taken.has(`${r.traceId}:${r.spanId}`));
    if (q === undefined) continue; // stored as it came: no request to join it to
    taken.add(`${q.traceId}:${q.spanId}`);
    joinResponse(batch.keep, p.keepIndex, q.traceId, q.spanId);
    gemini.facts.push({
      traceId: q.traceId,
      spanId: q.spanId,
      conversationId: p.key.sessionId,
      finish: p.finish,
    });
  }
  gemini.pending = [];
}

/** Applies facts to stored calls; returns the calls changed. */
async function applyFacts(
  db: Db,
  workspaceId: string,
  facts: readonly GeminiCallFacts[],
): Promise<ChangedCall[]> {
  const changed: ChangedCall[] = [];
  for (const f of facts) {
    const update: CallFactsUpdate = {
      traceId: f.traceId,
      spanId: f.spanId,
      producer: GEMINI_PRODUCER,
    };
    if (f.role !== undefined) {
      // a utility (compressor, router, ...) is a side call; sub-agents are one stream of their own
      const side = geminiSideCall(f.role ?? null);
      if (side !== null) update.sideCall = side;
      else if (f.role === 'subagent') update.agentId = 'subagent';
    }
    if (f.finish !== undefined) update.finish = f.finish;
    changed.push(...(await applyGeminiCallFacts(db, workspaceId, update)));
  }
  return changed;
}

/**
 * After a log batch is stored: its facts applied to the calls already stored, then the tool
 * parts of the calls its tool results (or its new side calls) concern.
 */
export async function applyGeminiLogBatch(
  db: Db,
  workspaceId: string,
  batch: LogBatch,
): Promise<IngestMark[]> {
  if (batch.gemini === null) return [];
  const changed = await applyFacts(db, workspaceId, batch.gemini.facts);
  const toolMarks = await joinGeminiToolResults(
    db,
    workspaceId,
    [],
    batch.normalized.toolResults,
    changed,
  );
  return [...marksOf(changed), ...toolMarks];
}

/**
 * After a span batch is stored: the facts of the stored records of its Gemini CLI calls
 * (`logged`: their records by trace and span id), then the tool parts of its new calls.
 */
export async function applyGeminiSpanBatch(
  db: Db,
  workspaceId: string,
  calls: readonly LlmCall[],
  logged: readonly LogRecord[],
): Promise<IngestMark[]> {
  const gemini = calls.filter((c) => c.producer === GEMINI_PRODUCER);
  if (gemini.length === 0) return [];
  const changed =
    logged.length === 0 ? [] : await applyFacts(db, workspaceId, geminiFactsFromLogs(logged));
  const toolMarks = await joinGeminiToolResults(db, workspaceId, gemini, [], changed);
  return [...marksOf(changed), ...toolMarks];
}

/**
 * Fills the parts of the main-thread calls concerned (new calls, the next call after each
 * logged result, the next call after each new side call) with the tool results logged since
 * their stream's previous main-thread call, as estimated tokens; the system prompt's size the
 * span gave stays.
 */
async function joinGeminiToolResults(
  db: Db,
  workspaceId: string,
  calls: readonly LlmCall[],
  results: readonly ToolResult[],
  changed: readonly ChangedCall[],
): Promise<IngestMark[]> {
  const targets = callTargets(calls);
  const after = [
    ...results
      .filter((r) => r.source === GEMINI_TOOL_LOG_SOURCE)
      .map((r) => ({ conversationId: r.conversationId, streamKey: r.streamKey, atNs: r.atNs })),
    ...changed
      .filter((c) => c.sideCall)
      .map((c) => ({ conversationId: c.conversationId, streamKey: c.streamKey, atNs: c.startNs })),
  ];
  for (const at of after) {
    const next = await nextCall(db, workspaceId, at, GEMINI_PRODUCERS);
    if (next !== undefined) targets.set(targetKey(next), next);
  }
  const marks: IngestMark[] = [];
  for (const t of targets.values()) {
    // sizes from message content win (none for Gemini CLI today: its messages are cut)
    if (t.parts !== null && t.parts.source !== 'tool_spans') continue;
    const chars = await loggedResultsSince(db, workspaceId, t, GEMINI_TOOL_LOG_SOURCE);
    if (t.parts !== null && sameTools(t.parts.tools, partsFromBytes(chars, null).tools)) continue;
    if (t.parts === null && Object.keys(chars).length === 0) continue;
    const parts = partsFromBytes(chars, null);
    parts.system = t.parts?.system ?? null;
    for (const row of await setCallParts(db, workspaceId, t, parts))
      marks.push({ conversationId: row.conversationId, fromNs: row.startNs, calls: 0 });
  }
  return marks;
}
