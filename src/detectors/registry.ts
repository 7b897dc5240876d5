/** The four context-rot detectors of DESIGN §6, in DETECTOR_IDS order, and what each needs. */
import { DETECTOR_CALL_NEEDS, needsText } from '../model/detector-needs.ts';
import type { DetectorId } from '../model/findings.ts';
import { contextTooFull } from './context-too-full.ts';
import { historyLost } from './history-lost.ts';
import { outputCutOff } from './output-cut-off.ts';
import { toolTakeover } from './tool-takeover.ts';
import type { Detector } from './types.ts';

/** The four detectors, in DETECTOR_IDS order. */
export const DETECTORS: readonly Detector<unknown>[] = Object.freeze([
  contextTooFull as Detector<unknown>,
  toolTakeover as Detector<unknown>,
  historyLost as Detector<unknown>,
  outputCutOff as Detector<unknown>,
]);

/** What a detector needs of each call, and what to send when its calls lack it (the Coverage page). */
export interface DetectorNeeds {
  /** What the calls must carry, in a few words. */
  needs: string;
  /**
   * What to send so the detector sees the calls it misses (the "quiet or blind?" answer), for a
   * producer without its own knob (src/model/producer-advice.ts has the coding agents' words).
   */
  hint: string;
}

/**
 * What each detector needs, by id: the words of its needs as declared once in
 * src/model/detector-needs.ts (which src/store/coverage.ts turns into the SQL that counts them).
 */
export const DETECTOR_NEEDS: Readonly<Record<DetectorId, DetectorNeeds>> = Object.freeze(
  Object.fromEntries(
    Object.entries(DETECTOR_CALL_NEEDS).map(([id, needs]) => [
      id,
      { needs: needsText(needs), hint: needs.hint },
    ]),
  ) as Record<DetectorId, DetectorNeeds>,
);
