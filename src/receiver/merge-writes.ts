/**
 * One call, one row; one compaction, one row, written: each step reads the stored rows a batch
 * may merge with (SQL, src/store/ingest.ts), lets the rules decide (./merge-rules.ts) and has
 * the store write what they decided, in the caller's transaction.
 */
import type { Compaction, LlmCall } from '../model/calls.ts';
import type { IngestMark } from '../store/conversations.ts';
import type { Db } from '../store/db.ts';
import {
  compactionsBetween,
  conversationsWithResults,
  deleteCalls,
  findingsNamingSpans,
  insertCompactionRows,
  insertNewCalls,
  insertReplacingCalls,
  marksOf,
  moveFinding,
  nextMainCall,
  rowsOfRequests,
  setSideCall,
  updateCompactionRow,
  updateMergedCalls,
} from '../store/ingest.ts';
import type { IngestTx } from '../store/staging.ts';
import {
  compactionWindow,
  conversationsToCheckForResults,
  finishCallMerge,
  planCallMerge,
  planCompactions,
  reanchoredFinding,
  reanchorMoves,
  replacementMarks,
  type CallPrecedence,
  type CallsOutcome,
  type Reanchor,
} from './merge-rules.ts';

export type { CallPrecedence, CallsOutcome } from './merge-rules.ts';

/**
 * Inserts calls and returns marks for the new ones (re-sent calls are not new). One LLM call is
 * one row whatever brought it (./merge-rules.ts planCallMerge): calls with a request id are
 * looked up by it (one query per batch); rows a better source replaces are deleted and the
 * findings anchored on them follow the new row; rows a worse source merges into are updated.
 * Conversations whose stored rows changed are marked from the earliest start involved, so the
 * evaluator replays them. `outcome` receives what the caller must do next (see CallsOutcome).
 */
export async function insertCalls(
  tx: IngestTx,
  calls: readonly LlmCall[],
  precedence: CallPrecedence,
  outcome?: CallsOutcome,
): Promise<IngestMark[]> {
  const { db } = tx;
  if (calls.length === 0) return [];
  const workspaceId = calls[0]!.workspaceId;
  const keyed = calls.filter((call) => call.requestId !== null);
  const existing = keyed.length === 0 ? [] : await rowsOfRequests(db, workspaceId, keyed);
  if (existing.length === 0) return insertNewCalls(tx, calls, precedence.settleMs);

  const plan = planCallMerge(calls, existing, precedence);
  if (outcome) outcome.merged += plan.merged;
  const logged = await conversationsWithResults(
    db,
    workspaceId,
    conversationsToCheckForResults(plan),
    precedence.partsResultSources ?? [],
  );
  const writes = finishCallMerge(plan, logged, precedence);
  outcome?.partsDropped.push(...writes.partsDropped);

  const marks = [...writes.marks];
  await deleteCalls(db, workspaceId, writes.gone);
  marks.push(...(await insertNewCalls(tx, plan.fresh, precedence.settleMs)));
  if (writes.replacements.length > 0) {
    await insertReplacingCalls(tx, writes.replacements);
    marks.push(...replacementMarks(writes.replacements, precedence.settleMs));
    await reanchorFindings(db, workspaceId, reanchorMoves(writes.replacements));
  }
  await updateMergedCalls(db, workspaceId, writes.updates);
  return marks;
}

/**
 * Moves the findings anchored on replaced call rows to the rows that replaced them
 * (./merge-rules.ts reanchoredFinding). A finding whose new anchor another finding holds
 * already is left as it is.
 */
async function reanchorFindings(
  db: Db,
  workspaceId: string,
  moves: readonly Reanchor[],
): Promise<void> {
  if (moves.length === 0) return;
  const rows = await findingsNamingSpans(
    db,
    workspaceId,
    [...new Set(moves.map((m) => m.conversationId))],
    [...new Set(moves.map((m) => m.from.spanId))],
  );
  for (const row of rows) {
    const moved = reanchoredFinding(row, moves);
    if (moved) await moveFinding(db, workspaceId, row, moved);
  }
}

/**
 * Inserts compactions and returns marks for the new ones and for those that changed. One
 * compaction is one row whatever reported it (./merge-rules.ts planCompactions). Stored
 * candidates are read in one query: the batch's conversations within the merge window of its
 * times.
 */
export async function insertCompactions(
  db: Db,
  compactions: readonly Compaction[],
): Promise<IngestMark[]> {
  if (compactions.length === 0) return [];
  const workspaceId = compactions[0]!.workspaceId;
  const { fromNs, toNs } = compactionWindow(compactions);
  const stored = await compactionsBetween(
    db,
    workspaceId,
    compactions.map((c) => c.conversationId),
    fromNs,
    toNs,
  );
  const writes = planCompactions(workspaceId, stored, compactions);
  const marks = await insertCompactionRows(db, writes.inserts);
  for (const update of writes.updates) {
    await updateCompactionRow(db, update.id, update.compaction, update.sources);
    if (update.mark) marks.push(update.mark);
  }
  return marks;
}

/**
 * Marks calls of the given requests as side calls (Claude Code `query_source` from log
 * events) and returns marks for their conversations: an already evaluated call that turns
 * out to be a side call makes the evaluator replay from it. A call that held logged tool
 * results as its parts while it was taken for a main call (its span came before its log event)
 * gives them up: `outcome.partsDropped` receives the next main call of its stream, whose input
 * they entered, for the caller to join them to.
 */
export async function markSideCalls(
  db: Db,
  workspaceId: string,
  sideCalls: ReadonlyArray<{ requestId: string; reason: string }>,
  outcome?: CallsOutcome,
): Promise<IngestMark[]> {
  const marks: IngestMark[] = [];
  for (const { requestId, reason } of sideCalls) {
    const changed = await setSideCall(db, workspaceId, requestId, reason);
    marks.push(...marksOf(changed, false));
    if (!outcome) continue;
    for (const row of changed) {
      const next = await nextMainCall(
        db,
        workspaceId,
        row.conversation_id,
        row.stream_key,
        row.at_ns,
      );
      if (next) outcome.partsDropped.push(next);
    }
  }
  return marks;
}
