/**
 * Writes what evaluations found: the findings of a batch of evaluated conversations upserted
 * together per workspace (src/store/findings.ts `upsertFindings`), and the deliveries of the
 * ones created or raised to critical queued together, each written `muted` when a mute holds
 * (the workspace's mutes read once, matched here). A batch costs a handful of statements
 * whatever its number of findings; each evaluation's counters are filled in as before.
 */
import type { FindingDraft } from '../model/findings.ts';
import type { ClaimedConversation } from '../store/conversations.ts';
import type { Db } from '../store/db.ts';
import { enqueueDeliveryEvents, type DeliveryEventRow } from '../store/deliveries.ts';
import { activeMutes, muteMatching, type MuteRule } from '../store/mutes.ts';
import { upsertFindings, type FindingUpsert } from '../store/findings.ts';
import type { EvaluationResult } from './evaluate.ts';

/** The findings one evaluation reported, to write; `result`'s counters are filled in. */
export interface PendingFindings {
  claimed: ClaimedConversation;
  result: EvaluationResult;
  /** In `(detector, anchor)` order. */
  upserts: FindingUpsert[];
  /** The drafts from imported history: stored with their call's time, never pushed. */
  fromHistory: ReadonlySet<FindingDraft>;
  /** The drafts found by judging a call again: counted as late when created. */
  late: ReadonlySet<FindingDraft>;
}

/** Writes the findings of `pending` (one transaction: `db`) and fills in their counters. */
export async function writeFindings(db: Db, pending: readonly PendingFindings[]): Promise<void> {
  const byWorkspace = new Map<string, PendingFindings[]>();
  for (const item of pending) {
    if (item.upserts.length === 0) continue;
    const list = byWorkspace.get(item.claimed.workspaceId) ?? [];
    list.push(item);
    byWorkspace.set(item.claimed.workspaceId, list);
  }
  for (const [workspaceId, items] of byWorkspace) {
    const upserted = await upsertFindings(
      db,
      workspaceId,
      items.flatMap((item) => item.upserts),
    );
    let mutes: MuteRule[] | undefined;
    const events: DeliveryEventRow[] = [];
    const eventOf: EvaluationResult[] = [];
    let at = 0;
    for (const item of items) {
      const { result } = item;
      for (const { draft } of item.upserts) {
        const done = upserted[at++]!;
        if (done.outcome === 'updated') result.findingsUpdated += 1;
        if (done.outcome !== 'created' && done.outcome !== 'escalated') continue;
        if (done.outcome === 'created') result.findingsCreated += 1;
        else result.findingsEscalated += 1;
        if (done.outcome === 'created' && item.late.has(draft)) result.findingsLate += 1;
        result.findingEvents.push({
          detector: draft.detector,
          severity: done.severity,
          event: done.outcome,
        });
        if (item.fromHistory.has(draft)) {
          result.findingsFromHistory += 1;
          continue;
        }
        // a mute that matches it: stored and listed, its deliveries written `muted`, never sent
        mutes ??= await activeMutes(db, workspaceId);
        events.push({
          findingId: done.id,
          severity: done.severity,
          event: done.outcome,
          muteId: muteMatching(mutes, draft, item.claimed.project),
        });
        eventOf.push(result);
      }
    }
    const queued = await enqueueDeliveryEvents(db, workspaceId, events);
    queued.forEach((n, i) => (eventOf[i]!.deliveriesQueued += n));
  }
}
