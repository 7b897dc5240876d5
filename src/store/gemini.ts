/**
 * The queries behind Gemini CLI's logs (the rules are the receiver's: src/receiver/gemini.ts,
 * src/ingest/gemini.ts): the stored `api_request` a streamed `api_response` answers, applying
 * what the logs say to a stored call (side call, sub-agent, finish reason, output tool call), and
 * the tool-result characters logged since a stream's previous main-thread call.
 */
import { sql } from 'kysely';
import type { FinishClass } from '../model/calls.ts';
import type { IngestMark } from './conversations.ts';
import type { Db } from './db.ts';
import { previousCountedCall, type ToolPartsTarget } from './logged-tool-results.ts';

/** The key a streamed `api_response` is joined to its `api_request` by (src/ingest/gemini.ts). */
export interface RequestKey {
  sessionId: string;
  promptId: string | null;
  role: string | null;
  model: string | null;
}

/** What to change on one stored call (its trace and span id), by the receiver's rules. */
export interface CallFactsUpdate {
  traceId: string;
  spanId: string;
  /** The producer whose calls these are (others are left alone). */
  producer: string;
  /** Make it a side call with this reason (when it is none yet). */
  sideCall?: string;
  /** Move it to this sub-agent's stream (when it is on the main thread). */
  agentId?: string;
  finish?: {
    finishReasonRaw: string | null;
    finishClass: FinishClass | null;
    outputToolCall: boolean | null;
    outputToolName: string | null;
  };
}

/**
 * The stored `api_request` records of the key logged between `fromNs` and `atNs`, latest first,
 * that no other stored `api_response` answers yet (a re-sent response at `atNs` does not count:
 * retries join the same way). At most `limit`.
 */
export async function storedGeminiRequests(
  db: Db,
  workspaceId: string,
  key: RequestKey,
  fromNs: string,
  atNs: string,
  limit = 4,
): Promise<Array<{ traceId: string; spanId: string }>> {
  const rows = await sql<{ trace_id: string; span_id: string }>`
    SELECT q.trace_id, q.span_id
      FROM log_records q
     WHERE q.workspace_id = ${workspaceId}
       AND q.event_name = 'gemini_cli.api_request'
       AND q.time_ns >= ${fromNs}::bigint AND q.time_ns <= ${atNs}::bigint
       AND q.trace_id IS NOT NULL AND q.span_id IS NOT NULL
       AND COALESCE(q.attributes->>'session.id', q.resource->>'session.id') = ${key.sessionId}
       AND (q.attributes->>'prompt_id') IS NOT DISTINCT FROM ${key.promptId}::text
       AND (q.attributes->>'role') IS NOT DISTINCT FROM ${key.role}::text
       AND (q.attributes->>'model') IS NOT DISTINCT FROM ${key.model}::text
       AND NOT EXISTS (
         SELECT 1 FROM log_records r
          WHERE r.workspace_id = q.workspace_id AND r.trace_id = q.trace_id
            AND r.span_id = q.span_id AND r.event_name = 'gemini_cli.api_response'
            AND r.time_ns <> ${atNs}::bigint)
     ORDER BY q.time_ns DESC, q.id DESC
     LIMIT ${limit}`.execute(db);
  return rows.rows.map((r) => ({ traceId: r.trace_id, spanId: r.span_id }));
}

/** A changed call: its conversation, stream and start. */
export interface ChangedCall {
  conversationId: string;
  streamKey: string;
  startNs: string;
  /** Set when the call became a side call (its stream's next call may need its tool parts again). */
  sideCall: boolean;
}

/**
 * Applies what the logs say about one call (by trace and span id) to its stored row, if it is
 * stored: a side-call reason, a sub-agent stream, the finish reason and what the response says
 * of the output (a tool call is kept once either source saw one). Returns the calls changed.
 */
export async function applyGeminiCallFacts(
  db: Db,
  workspaceId: string,
  facts: CallFactsUpdate,
): Promise<ChangedCall[]> {
  const changed: ChangedCall[] = [];
  const base = db
    .updateTable('llm_calls')
    .where('workspace_id', '=', workspaceId)
    .where('trace_id', '=', facts.traceId)
    .where('span_id', '=', facts.spanId)
    .where('producer', '=', facts.producer);
  const returning = ['conversation_id', 'stream_key', 'start_ns as at_ns'] as const;
  const note = (
    rows: Array<{ conversation_id: string; stream_key: string; at_ns: unknown }>,
    sideCall: boolean,
  ) => {
    for (const r of rows)
      changed.push({
        conversationId: r.conversation_id,
        streamKey: r.stream_key,
        startNs: String(r.at_ns),
        sideCall,
      });
  };
  if (facts.sideCall !== undefined) {
    note(
      await base
        .set({ side_call: facts.sideCall })
        .where('side_call', 'is', null)
        .returning(returning)
        .execute(),
      true,
    );
  }
  if (facts.agentId !== undefined) {
    note(
      await base
        .set({
          agent_id: facts.agentId,
          stream_key: sql<string>`conversation_id || '|' || ${facts.agentId}::text`,
        })
        .where('agent_id', 'is', null)
        .returning(returning)
        .execute(),
      false,
    );
  }
  const f = facts.finish;
  if (f !== undefined) {
    const toolCall = f.outputToolCall;
    note(
      await base
        .set({
          finish_reason_raw: f.finishReasonRaw,
          finish_class: f.finishClass,
          // the span's output (when logged) and the response text may each say it held a call
          output_tool_call: sql<
            boolean | null
          >`CASE WHEN ${toolCall}::boolean IS NULL THEN output_tool_call ELSE (output_tool_call IS TRUE OR ${toolCall}::boolean) END`,
          output_tool_name: sql<
            string | null
          >`COALESCE(output_tool_name, ${f.outputToolName}::text)`,
        })
        .where((eb) =>
          eb.or([
            eb('finish_reason_raw', 'is distinct from', f.finishReasonRaw),
            eb('finish_class', 'is distinct from', f.finishClass),
            ...(toolCall === true
              ? [eb('output_tool_call', 'is not', true)]
              : toolCall === false
                ? [eb('output_tool_call', 'is', null)]
                : []),
            ...(f.outputToolName !== null ? [eb('output_tool_name', 'is', null)] : []),
          ]),
        )
        .returning(returning)
        .execute(),
      false,
    );
  }
  return changed;
}

/** Marks for changed calls: their conversations are evaluated again from the call. */
export function marksOf(changed: readonly ChangedCall[]): IngestMark[] {
  return changed.map((c) => ({ conversationId: c.conversationId, fromNs: c.startNs, calls: 0 }));
}

/**
 * The sizes of each tool's results of `source` (Gemini CLI's `gemini_cli.tool_call` logs) for the
 * target's stream since its previous main-thread call, up to the target's start.
 */
export async function loggedResultsSince(
  db: Db,
  workspaceId: string,
  t: ToolPartsTarget,
  source: string,
): Promise<Record<string, number>> {
  const prev = await previousCountedCall(db, workspaceId, t);
  const rows = await sql<{ tool_name: string; chars: string | number }>`
    SELECT tool_name, sum(result_size) AS chars
      FROM tool_results
     WHERE workspace_id = ${workspaceId} AND conversation_id = ${t.conversationId}
       AND stream_key = ${t.streamKey} AND source = ${source}
       AND result_size IS NOT NULL AND at_ns <= ${t.startNs}::bigint
       ${prev === undefined ? sql`` : sql`AND at_ns > ${String(prev.start_ns)}::bigint`}
     GROUP BY tool_name`.execute(db);
  return Object.fromEntries(rows.rows.map((r) => [r.tool_name, Number(r.chars)]));
}
