/**
 * What the evaluator stores on a conversation row (and in checkpoints): each detector's
 * JSON state by detector id, and the number of calls since the last checkpoint.
 */
import { initialStates, type DetectorStates } from '../detectors/drive.ts';
import type { Detector } from '../detectors/types.ts';

/** The stored evaluation state of one conversation. */
export interface EvaluatorState {
  v: 1;
  /** Calls fed since the last checkpoint was taken. */
  sinceCheckpoint: number;
  /** Each detector's state, by detector id. */
  detectors: DetectorStates;
}

/** The state before a conversation's first item. */
export function initialState(detectors: readonly Detector[]): EvaluatorState {
  return { v: 1, sinceCheckpoint: 0, detectors: initialStates(detectors) };
}

/**
 * Reads a stored state; a detector missing from it (added since) starts from its initial
 * state. Undefined when the value is not a state of this version: the caller replays from
 * the start.
 */
export function readState(
  stored: unknown,
  detectors: readonly Detector[],
): EvaluatorState | undefined {
  if (typeof stored !== 'object' || stored === null) return undefined;
  const { v, sinceCheckpoint, detectors: states } = stored as Record<string, unknown>;
  if (
    v !== 1 ||
    typeof sinceCheckpoint !== 'number' ||
    typeof states !== 'object' ||
    states === null
  ) {
    return undefined;
  }
  const byId = states as Record<string, unknown>;
  return {
    v: 1,
    sinceCheckpoint,
    detectors: Object.fromEntries(
      detectors.map((d) => [d.id, d.id in byId ? byId[d.id] : d.initial()]),
    ),
  };
}
