/** Findings: what the detectors report (DESIGN §6, §8). */

export type DetectorId = 'context_too_full' | 'tool_takeover' | 'history_lost' | 'output_cut_off';

export const DETECTOR_IDS: readonly DetectorId[] = [
  'context_too_full',
  'tool_takeover',
  'history_lost',
  'output_cut_off',
];

export type Severity = 'info' | 'warning' | 'critical';

export const SEVERITY_RANK: Record<Severity, number> = { info: 0, warning: 1, critical: 2 };

export {
  COUNT_THRESHOLDS,
  DEFAULT_THRESHOLDS,
  RATIO_THRESHOLDS,
  type Thresholds,
} from './thresholds.ts';

/**
 * A finding as a detector produces it. `(detector, anchor)` is unique per workspace:
 * producing the same anchor again updates the stored finding (details, escalation),
 * never duplicates it, and never lowers its severity.
 */
export interface FindingDraft {
  detector: DetectorId;
  anchor: string;
  severity: Severity;
  kind: string | null;
  conversationId: string;
  streamKey: string;
  runId: string;
  traceId: string;
  spanId: string;
  model: string | null;
  /** One human-readable line, counts and names only (never message text). */
  summary: string;
  details: Record<string, unknown>;
}

/** A stored finding, as the API returns it (DESIGN §8). */
export interface Finding extends FindingDraft {
  id: string;
  workspace: string;
  createdAt: string;
  updatedAt: string;
}
