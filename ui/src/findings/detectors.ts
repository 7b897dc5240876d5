/**
 * The detectors (DESIGN §6) and severities as the console names them: the server's own lists
 * (src/model/vocabulary.ts).
 */
import {
  DETECTOR_IDS,
  DETECTOR_TITLES,
  detectorTitle,
  SEVERITIES,
  type DetectorId,
} from '../../../src/model/vocabulary.ts';

export { SEVERITIES, type DetectorId };

/** The detectors with their labels, in the server's order. */
export const DETECTORS: ReadonlyArray<{ id: DetectorId; label: string }> = DETECTOR_IDS.map(
  (id) => ({ id, label: DETECTOR_TITLES[id] }),
);

/** The label of a detector id; an unknown id is shown as it is. */
export const detectorLabel = detectorTitle;
