/**
 * Qwen Code's evidence across its two signals (src/ingest/qwen.ts for what it sends): the
 * `qwen-code.llm_request` spans are the calls; its logs say which calls are the history
 * compressor's (side calls: the `api_request` text, or the `chat_compression` event's input
 * count matched to a stored call) and how big each tool result was (`tool_call`). Logs and spans
 * are exported on separate schedules, so either may be stored first:
 * - a log batch applies its side calls to the calls already stored;
 * - a span batch applies the side calls of the stored `api_request` records of its calls and of
 *   the stored compressions of its sessions.
 * Tool results logged since a stream's previous main-thread call fill the next main-thread call's
 * parts (estimated tokens, as for Gemini CLI), again after a call turns out to be a side call (the
 * compressor runs between a tool result and the next call). Everything returns marks for the calls
 * it changed, so conversations are evaluated again.
 */
import { sql } from 'kysely';
import type { LogBatch } from '../ingest/claude-code-logs.ts';
import {
  QWEN_CHAT_COMPRESSION,
  QWEN_COMPRESSOR,
  QWEN_PRODUCER,
  QWEN_TOOL_LOG_SOURCE,
  qwenSideFactsFromLogs,
  qwenTextFactsFromLogs,
  type QwenCompressorHint,
  type QwenSideFact,
  type QwenTextFact,
} from '../ingest/qwen.ts';
import { partsFromBytes } from '../ingest/tool-parts.ts';
import type { LlmCall, ToolResult } from '../model/calls.ts';
import type { LogRecord } from '../model/telemetry.ts';
import type { IngestMark } from '../store/conversations.ts';
import type { Db } from '../store/db.ts';
import {
  applyGeminiCallFacts,
  loggedResultsSince,
  marksOf,
  type ChangedCall,
} from '../store/gemini.ts';
import { nextCall, setCallParts } from '../store/logged-tool-results.ts';
import { callTargets, sameTools, targetKey } from './logged-tool-parts.ts';

const QWEN_PRODUCERS: readonly string[] = [QWEN_PRODUCER];

/** True for a call of Qwen Code's spans. */
export const isQwenCall = (call: Pick<LlmCall, 'producer'>) => call.producer === QWEN_PRODUCER;

/** The conversations a log batch's Qwen Code evidence completes (see geminiEvidenceKeys). */
export function qwenEvidenceKeys(workspaceId: string, batch: LogBatch): string[] {
  const q = batch.qwen;
  if (q === null || q === undefined) return [];
  const ids = new Set<string>([
    ...q.sideFacts.map((f) => f.conversationId),
    ...q.textFacts.map((f) => f.conversationId),
    ...q.compressors.map((c) => c.conversationId),
    ...q.toolResults.map((r) => r.conversationId),
  ]);
  return [...ids].map((id) => `conversation:${workspaceId}:${id}`);
}

async function applySideFacts(
  db: Db,
  workspaceId: string,
  facts: readonly QwenSideFact[],
): Promise<ChangedCall[]> {
  const changed: ChangedCall[] = [];
  for (const f of facts)
    changed.push(
      ...(await applyGeminiCallFacts(db, workspaceId, {
        traceId: f.traceId,
        spanId: f.spanId,
        producer: QWEN_PRODUCER,
        sideCall: f.sideCall,
      })),
    );
  return changed;
}

/** Cut calls whose logged response held text: their output was text, not a tool call. */
async function applyTextFacts(
  db: Db,
  workspaceId: string,
  facts: readonly QwenTextFact[],
): Promise<ChangedCall[]> {
  const changed: ChangedCall[] = [];
  for (const f of facts) {
    const rows = await db
      .updateTable('llm_calls')
      .set({ output_tool_call: false })
      .where('workspace_id', '=', workspaceId)
      .where('trace_id', '=', f.traceId)
      .where('span_id', '=', f.spanId)
      .where('producer', '=', QWEN_PRODUCER)
      .where('output_tool_call', 'is', null)
      .returning(['conversation_id', 'stream_key', 'start_ns'])
      .execute();
    for (const r of rows)
      changed.push({
        conversationId: r.conversation_id,
        streamKey: r.stream_key,
        startNs: String(r.start_ns),
        sideCall: false,
      });
  }
  return changed;
}

/**
 * The compressor call of each compression: the latest stored call of the session that started
 * before the compression was logged and whose input count is the compression's input count.
 */
async function applyCompressors(
  db: Db,
  workspaceId: string,
  hints: readonly QwenCompressorHint[],
): Promise<ChangedCall[]> {
  const changed: ChangedCall[] = [];
  for (const h of hints) {
    const call = await db
      .selectFrom('llm_calls')
      .select(['trace_id', 'span_id', 'side_call'])
      .where('workspace_id', '=', workspaceId)
      .where('conversation_id', '=', h.conversationId)
      .where('producer', '=', QWEN_PRODUCER)
      .where(sql<boolean>`input_tokens_raw = ${h.inputTokens}`)
      .where('start_ns', '<=', h.atNs)
      .orderBy('start_ns', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (call === undefined || call.side_call !== null) continue;
    changed.push(
      ...(await applyGeminiCallFacts(db, workspaceId, {
        traceId: call.trace_id,
        spanId: call.span_id,
        producer: QWEN_PRODUCER,
        sideCall: QWEN_COMPRESSOR,
      })),
    );
  }
  return changed;
}

/** The stored compressions of these sessions, as compressor hints. */
async function storedCompressions(
  db: Db,
  workspaceId: string,
  sessions: readonly string[],
): Promise<QwenCompressorHint[]> {
  if (sessions.length === 0) return [];
  const rows = await sql<{ session: string; input: string | null; time_ns: string }>`
    SELECT COALESCE(attributes->>'session.id', resource->>'session.id') AS session,
           attributes->>'compression_input_token_count' AS input, time_ns
      FROM log_records
     WHERE workspace_id = ${workspaceId} AND event_name = ${QWEN_CHAT_COMPRESSION}
       AND COALESCE(attributes->>'session.id', resource->>'session.id') IN (${sql.join(sessions)})`.execute(
    db,
  );
  return rows.rows.flatMap((r) => {
    const input = Number(r.input);
    return Number.isInteger(input) && input > 0
      ? [{ conversationId: r.session, inputTokens: input, atNs: String(r.time_ns) }]
      : [];
  });
}

/** After a log batch is stored: its side calls applied, then the tool parts they concern. */
export async function applyQwenLogBatch(
  db: Db,
  workspaceId: string,
  batch: LogBatch,
): Promise<IngestMark[]> {
  const q = batch.qwen;
  if (q === null || q === undefined) return [];
  const changed = [
    ...(await applySideFacts(db, workspaceId, q.sideFacts)),
    ...(await applyTextFacts(db, workspaceId, q.textFacts)),
    ...(await applyCompressors(db, workspaceId, q.compressors)),
  ];
  const toolMarks = await joinQwenToolResults(db, workspaceId, [], q.toolResults, changed);
  return [...marksOf(changed), ...toolMarks];
}

/**
 * After a span batch is stored: the side calls of the stored records of its Qwen Code calls
 * (`logged`: their records by trace and span id) and of the stored compressions of their
 * sessions, then the tool parts of its new calls.
 */
export async function applyQwenSpanBatch(
  db: Db,
  workspaceId: string,
  calls: readonly LlmCall[],
  logged: readonly LogRecord[],
): Promise<IngestMark[]> {
  const qwen = calls.filter(isQwenCall);
  if (qwen.length === 0) return [];
  const sessions = [...new Set(qwen.map((c) => c.conversationId))];
  const changed = [
    ...(logged.length === 0
      ? []
      : [
          ...(await applySideFacts(db, workspaceId, qwenSideFactsFromLogs(logged))),
          ...(await applyTextFacts(db, workspaceId, qwenTextFactsFromLogs(logged))),
        ]),
    ...(await applyCompressors(
      db,
      workspaceId,
      await storedCompressions(db, workspaceId, sessions),
    )),
  ];
  // calls that just became side calls take no tool parts
  const side = new Set(changed.filter((c) => c.sideCall).map((c) => `${c.streamKey}:${c.startNs}`));
  const main = qwen.filter((c) => !side.has(`${c.streamKey}:${c.startNs}`));
  const toolMarks = await joinQwenToolResults(db, workspaceId, main, [], changed);
  return [...marksOf(changed), ...toolMarks];
}

/**
 * Fills the parts of the main-thread calls concerned (new calls, the next call after each logged
 * result, the next call after each new side call) with the tool results logged since their
 * stream's previous main-thread call, as estimated tokens.
 */
async function joinQwenToolResults(
  db: Db,
  workspaceId: string,
  calls: readonly LlmCall[],
  results: readonly ToolResult[],
  changed: readonly ChangedCall[],
): Promise<IngestMark[]> {
  const targets = callTargets(calls);
  const after = [
    ...results
      .filter((r) => r.source === QWEN_TOOL_LOG_SOURCE)
      .map((r) => ({ conversationId: r.conversationId, streamKey: r.streamKey, atNs: r.atNs })),
    ...changed
      .filter((c) => c.sideCall)
      .map((c) => ({ conversationId: c.conversationId, streamKey: c.streamKey, atNs: c.startNs })),
  ];
  for (const at of after) {
    const next = await nextCall(db, workspaceId, at, QWEN_PRODUCERS);
    if (next !== undefined) targets.set(targetKey(next), next);
  }
  const marks: IngestMark[] = [];
  for (const t of targets.values()) {
    if (t.parts !== null && t.parts.source !== 'tool_spans') continue;
    const chars = await loggedResultsSince(db, workspaceId, t, QWEN_TOOL_LOG_SOURCE);
    if (t.parts !== null && sameTools(t.parts.tools, partsFromBytes(chars, null).tools)) continue;
    if (t.parts === null && Object.keys(chars).length === 0) continue;
    const parts = partsFromBytes(chars, null);
    parts.system = t.parts?.system ?? null;
    for (const row of await setCallParts(db, workspaceId, t, parts))
      marks.push({ conversationId: row.conversationId, fromNs: row.startNs, calls: 0 });
  }
  return marks;
}
