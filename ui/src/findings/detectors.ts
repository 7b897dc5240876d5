/** The detectors (DESIGN §6) as the console names them. */
export const DETECTORS = [
  { id: 'context_too_full', label: 'Context too full' },
  { id: 'history_lost', label: 'History lost' },
  { id: 'tool_takeover', label: 'Tool takeover' },
  { id: 'output_cut_off', label: 'Output cut off' },
] as const;

export type DetectorId = (typeof DETECTORS)[number]['id'];

export const SEVERITIES = ['info', 'warning', 'critical'] as const;

/** The label of a detector id; an unknown id is shown as it is. */
export function detectorLabel(id: string): string {
  return DETECTORS.find((detector) => detector.id === id)?.label ?? id;
}
