/** The four context-rot detectors of DESIGN §6, in DETECTOR_IDS order. */
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
