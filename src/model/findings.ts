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

/** The per-workspace knobs of the Context rot alert. Ratios are 0..1. */
export interface Thresholds {
  /** Share of the window at which context_too_full fires. Default 0.70. */
  usageThreshold: number;
  /** Share of the window at which context_too_full turns critical. Default 0.85. */
  usageCritical: number;
  /** One tool's share of a call's input at which a tool_takeover episode starts. Default 0.30. */
  toolShare: number;
  /** Calls after the first that must keep at least half of toolShare. Default 2. */
  toolPersistCalls: number;
  /** Relative usage drop between consecutive calls for history_lost. Default 0.30. */
  dropRatio: number;
  /** Absolute usage drop (tokens) for history_lost. Default 2000. */
  dropMinTokens: number;
  /** System prompt shrink ratio that makes a drop a warning. Default 0.10. */
  systemShrink: number;
}

/** The thresholds that are ratios (0..1). */
export const RATIO_THRESHOLDS = [
  'usageThreshold',
  'usageCritical',
  'toolShare',
  'dropRatio',
  'systemShrink',
] as const satisfies ReadonlyArray<keyof Thresholds>;

/** The thresholds that are counts (positive integers). */
export const COUNT_THRESHOLDS = [
  'toolPersistCalls',
  'dropMinTokens',
] as const satisfies ReadonlyArray<keyof Thresholds>;

export const DEFAULT_THRESHOLDS: Readonly<Thresholds> = Object.freeze({
  usageThreshold: 0.7,
  usageCritical: 0.85,
  toolShare: 0.3,
  toolPersistCalls: 2,
  dropRatio: 0.3,
  dropMinTokens: 2000,
  systemShrink: 0.1,
});

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
