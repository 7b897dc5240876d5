/**
 * The lists people and programs share, written once: the detectors with the titles people read,
 * the severities in rising order, and the knob names. Dependency-free, so the console
 * (ui/src/findings/detectors.ts, ui/src/alert/model.ts) imports it as the server does.
 */

export type DetectorId = 'context_too_full' | 'tool_takeover' | 'history_lost' | 'output_cut_off';

/** The detectors (DESIGN §6), in the order the server runs and reports them. */
export const DETECTOR_IDS: readonly DetectorId[] = [
  'context_too_full',
  'tool_takeover',
  'history_lost',
  'output_cut_off',
];

/** Detector ids as people read them (channels, the console, the CLI). */
export const DETECTOR_TITLES: Readonly<Record<DetectorId, string>> = {
  context_too_full: 'Context too full',
  tool_takeover: 'Tool takeover',
  history_lost: 'History lost',
  output_cut_off: 'Output cut off',
};

/** A detector's title, or the id itself when it is not one of ours. */
export function detectorTitle(detector: string): string {
  return (DETECTOR_TITLES as Record<string, string>)[detector] ?? detector;
}

export type Severity = 'info' | 'warning' | 'critical';

/** The severities, lowest first. */
export const SEVERITIES: readonly Severity[] = ['info', 'warning', 'critical'];

export const SEVERITY_RANK: Readonly<Record<Severity, number>> = {
  info: 0,
  warning: 1,
  critical: 2,
};

/** The knobs of the Context rot alert (their units, defaults and meaning: ./threshold-table.ts). */
export type ThresholdKey =
  | 'usageThreshold'
  | 'usageCritical'
  | 'toolShare'
  | 'toolPersistCalls'
  | 'dropRatio'
  | 'dropMinTokens'
  | 'systemShrink';
