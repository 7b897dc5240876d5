/**
 * The detector contract. A detector is a pure reducer over one conversation's timeline:
 * items arrive in start-time order (calls by (startNs, spanId), compactions at atNs), and
 * each step returns the new state and the findings to upsert. No clock, no I/O; the state
 * must be plain JSON (it is stored on the conversation row between evaluations), which is
 * what keeps the cost of a new call independent of the conversation's length.
 */
import type { TimelineItem } from '../model/calls.ts';
import type { DetectorId, FindingDraft } from '../model/findings.ts';
import type { Thresholds } from '../model/thresholds.ts';

export interface DetectorContext {
  thresholds: Thresholds;
}

export interface DetectorStep<S> {
  state: S;
  /** Findings to upsert by (detector, anchor); may repeat an anchor with new details or a higher severity. */
  findings: FindingDraft[];
}

export interface Detector<S = unknown> {
  id: DetectorId;
  /** The state before the conversation's first item. */
  initial(): S;
  /** Feeds one item. Must not mutate `state` or `item`. */
  step(state: Readonly<S>, item: TimelineItem, context: DetectorContext): DetectorStep<S>;
}
