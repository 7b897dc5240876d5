/**
 * The one detector driver (DESIGN §6): feeds a conversation's timeline to the detectors and
 * collects their findings. The evaluator, `rotscope analyze` and the tests all run the
 * detectors through it, so the rules below hold wherever findings come from:
 * - one finding per `(detector, anchor)`: a detector that reports an anchor again updates it;
 * - a finding's severity is never lowered (the details are the latest, the severity the
 *   highest reported);
 * - a finding is never retracted: once reported, it stays in the set.
 *
 * Pure: no clock, no I/O. The states are plain JSON, so a caller can store them and feed the
 * next items later (the evaluator does, page by page and evaluation by evaluation).
 */
import type { LlmCall } from '../model/calls.ts';
import { SEVERITY_RANK, type DetectorId, type FindingDraft } from '../model/findings.ts';
import { DETECTORS } from './registry.ts';
import type { TimelineItem } from '../model/calls.ts';
import type { Detector, DetectorContext } from './types.ts';

/** Each detector's state by detector id, as stored between runs (plain JSON). */
export type DetectorStates = Partial<Record<DetectorId, unknown>>;

/** The states before a conversation's first item. */
export function initialStates(detectors: readonly Detector[] = DETECTORS): DetectorStates {
  return Object.fromEntries(detectors.map((d) => [d.id, d.initial()]));
}

/**
 * The findings of one or more runs, one per `(detector, anchor)`, in the order they were first
 * reported: a report of a known anchor replaces its details and keeps the higher severity.
 */
export class FindingSet {
  readonly #byKey = new Map<string, FindingDraft>();

  /** Adds a detector's report (the draft itself is not changed). */
  add(draft: FindingDraft): void {
    const key = `${draft.detector}\u0000${draft.anchor}`;
    const seen = this.#byKey.get(key);
    const lowered =
      seen !== undefined && SEVERITY_RANK[seen.severity] > SEVERITY_RANK[draft.severity];
    this.#byKey.set(key, lowered ? { ...draft, severity: seen.severity } : draft);
  }

  get size(): number {
    return this.#byKey.size;
  }

  /** The findings, in the order they were first reported. */
  values(): FindingDraft[] {
    return [...this.#byKey.values()];
  }
}

/** Options of {@link driveDetectors}. */
export interface DriveOptions {
  /** The detectors to run, in order. Default: the four of DESIGN §6 (`DETECTORS`). */
  detectors?: readonly Detector[];
  /** Where the findings are collected; pass the same set to continue a run. Default: a new one. */
  findings?: FindingSet;
  /**
   * Called after each call item was fed to every detector, with the states after it (the
   * evaluator takes its checkpoints here). The states must not be mutated.
   */
  afterCall?: (call: LlmCall, states: DetectorStates) => void;
}

/** What {@link driveDetectors} returns. */
export interface DriveResult {
  /** The states after the last item (a new object). */
  states: DetectorStates;
  /** The findings collected (the `findings` option when given). */
  findings: FindingSet;
}

/**
 * Feeds `items` (in timeline order, see `buildTimeline`) to every detector, one item at a
 * time, starting from `states` (a detector without a state starts from its initial one, so
 * `{}` starts a new conversation). Never mutates `states`, `items` or `context`.
 */
export function driveDetectors(
  states: Readonly<DetectorStates>,
  items: readonly TimelineItem[],
  context: DetectorContext,
  options: DriveOptions = {},
): DriveResult {
  const detectors = options.detectors ?? DETECTORS;
  const findings = options.findings ?? new FindingSet();
  let current: DetectorStates = Object.fromEntries(
    detectors.map((d) => [d.id, states[d.id] === undefined ? d.initial() : states[d.id]]),
  );
  for (const item of items) {
    const next: DetectorStates = {};
    for (const detector of detectors) {
      const step = detector.step(current[detector.id] as Readonly<unknown>, item, context);
      next[detector.id] = step.state;
      for (const draft of step.findings) findings.add(draft);
    }
    current = next;
    if (item.type === 'call') options.afterCall?.(item.call, current);
  }
  return { states: current, findings };
}
