/**
 * The one table of the Context rot alert's knobs (DESIGN §6, §8): per threshold the detector it
 * tunes, its title, its unit (and so its bounds), its default, and what it means, both as the
 * API documents it and as the console explains it beside the knob. Dependency-free, so the
 * console (ui/src/alert/model.ts) imports it as the server does; ./thresholds.ts derives the zod
 * schemas, the defaults and the checks from it.
 */
import type { DetectorId, ThresholdKey } from './vocabulary.ts';

/** How a knob is written: a share of 0..1 (shown also as %), or a whole number of calls or tokens. */
export type ThresholdUnit = 'share' | 'calls' | 'tokens';

/** What a value must be: a ratio within 0..1 (a share), or a count, whole and ≥ 1. */
export type ThresholdKind = 'ratio' | 'count';

export interface ThresholdEntry {
  /** The detector the knob tunes. */
  detector: DetectorId;
  /** The knob's name to people (the console's label). */
  title: string;
  unit: ThresholdUnit;
  default: number;
  /** One self-contained line: the API's description (the OpenAPI document's). */
  doc: string;
  /**
   * What the knob does, in the words of the detector rules (DESIGN §6): the console's line
   * beside it, read after the knobs before it in its detector's group.
   */
  explain: string;
}

/** The seven knobs, grouped by the detector they tune. */
export const THRESHOLD_TABLE = {
  usageThreshold: {
    detector: 'context_too_full',
    title: 'Usage threshold',
    unit: 'share',
    default: 0.7,
    doc: 'Share of the window at which context_too_full fires.',
    explain:
      'A run is reported once a call fills this share of its model’s context window (first crossing call).',
  },
  usageCritical: {
    detector: 'context_too_full',
    title: 'Critical usage',
    unit: 'share',
    default: 0.85,
    doc: 'Share of the window at which context_too_full turns critical; at least usageThreshold.',
    explain:
      'The finding turns critical once the run’s fullest call reaches this share (or a call overflowed). At least the usage threshold.',
  },
  toolShare: {
    detector: 'tool_takeover',
    title: 'Tool share',
    unit: 'share',
    default: 0.3,
    doc: "One tool's share of a call's input at which a tool_takeover episode starts.",
    explain: 'One tool’s results taking this share of a call’s input start a takeover episode.',
  },
  toolPersistCalls: {
    detector: 'tool_takeover',
    title: 'Persisting calls',
    unit: 'calls',
    default: 2,
    doc: 'Calls after the first that must keep at least half of toolShare.',
    explain:
      'The episode is reported when the tool’s results stay at least half that share for this many following calls.',
  },
  dropRatio: {
    detector: 'history_lost',
    title: 'Drop ratio',
    unit: 'share',
    default: 0.3,
    doc: 'Relative usage drop between consecutive calls for history_lost.',
    explain:
      'A call whose usage falls by this share from the previous call of the same thread counts as a drop…',
  },
  dropMinTokens: {
    detector: 'history_lost',
    title: 'Minimum drop',
    unit: 'tokens',
    default: 2000,
    doc: 'Absolute usage drop (tokens) for history_lost.',
    explain: '…and only if it also falls by at least this many tokens.',
  },
  systemShrink: {
    detector: 'history_lost',
    title: 'System prompt shrink',
    unit: 'share',
    default: 0.1,
    doc: 'System prompt shrink ratio that makes a drop a warning.',
    explain:
      'A drop where the system prompt shrank by more than this share (or vanished) is a warning even when a compaction explains it.',
  },
} as const satisfies Record<ThresholdKey, ThresholdEntry>;

/** Every threshold, in the order of the table (and of the objects built from it). */
export const THRESHOLD_KEYS: readonly ThresholdKey[] = Object.freeze(
  Object.keys(THRESHOLD_TABLE) as ThresholdKey[],
);

/** A share is a ratio; calls and tokens are counts. */
export const UNIT_KIND: Readonly<Record<ThresholdUnit, ThresholdKind>> = {
  share: 'ratio',
  calls: 'count',
  tokens: 'count',
};

/** The range of each kind (a count is also whole): what the API accepts. */
export const KIND_RANGE: Readonly<Record<ThresholdKind, { minimum: number; maximum?: number }>> = {
  ratio: { minimum: 0, maximum: 1 },
  count: { minimum: 1 },
};

/** Whether a threshold is a ratio or a count. */
export function thresholdKind(key: ThresholdKey): ThresholdKind {
  return UNIT_KIND[THRESHOLD_TABLE[key].unit];
}
