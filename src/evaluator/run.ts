/**
 * The pure core: feeds timeline items through every detector, collecting the findings to
 * upsert (one draft per detector and anchor, the latest, at the highest severity seen) and
 * the checkpoints to save. No I/O, no clock.
 */
import type { Detector, DetectorContext, TimelineItem } from '../detectors/types.ts';
import { SEVERITY_RANK, type FindingDraft } from '../model/findings.ts';
import type { TimelinePosition } from '../store/timeline.ts';
import type { EvaluatorState } from './state.ts';

export interface FeedResult {
  state: EvaluatorState;
  /** States to save as checkpoints, each after the call at its position. */
  checkpoints: { position: TimelinePosition; state: EvaluatorState }[];
}

/** Collects drafts by `(detector, anchor)`: the latest wins, severity never goes down. */
export class DraftSet {
  readonly #drafts = new Map<string, FindingDraft>();

  add(draft: FindingDraft): void {
    const key = `${draft.detector}\u0000${draft.anchor}`;
    const seen = this.#drafts.get(key);
    const severity =
      seen && SEVERITY_RANK[seen.severity] > SEVERITY_RANK[draft.severity]
        ? seen.severity
        : draft.severity;
    // Re-inserting moves the key to the end: drafts come out in the order they last changed.
    this.#drafts.delete(key);
    this.#drafts.set(key, severity === draft.severity ? draft : { ...draft, severity });
  }

  get size(): number {
    return this.#drafts.size;
  }

  values(): FindingDraft[] {
    return [...this.#drafts.values()];
  }
}

/**
 * Feeds `items` (in timeline order) to every detector, starting from `state`. Findings go
 * into `drafts`. Every `checkpointEvery` calls the state is recorded as a checkpoint at that
 * call (0 disables checkpoints). Neither `state` nor `items` is mutated.
 */
export function feedTimeline(
  detectors: readonly Detector[],
  state: EvaluatorState,
  items: readonly TimelineItem[],
  context: DetectorContext,
  drafts: DraftSet,
  checkpointEvery: number,
): FeedResult {
  let states = state.detectors;
  let sinceCheckpoint = state.sinceCheckpoint;
  const checkpoints: FeedResult['checkpoints'] = [];
  for (const item of items) {
    const next: Record<string, unknown> = {};
    for (const detector of detectors) {
      const step = detector.step(states[detector.id] as Readonly<unknown>, item, context);
      next[detector.id] = step.state;
      for (const draft of step.findings) drafts.add(draft);
    }
    states = next;
    if (item.type !== 'call') continue;
    sinceCheckpoint += 1;
    if (checkpointEvery > 0 && sinceCheckpoint >= checkpointEvery) {
      sinceCheckpoint = 0;
      checkpoints.push({
        position: { ns: item.call.startNs, spanId: item.call.spanId },
        state: { v: 1, sinceCheckpoint, detectors: states },
      });
    }
  }
  return { state: { v: 1, sinceCheckpoint, detectors: states }, checkpoints };
}
