/**
 * The detectors' public face: the four context-rot detectors of DESIGN §6, the registry, the
 * one driver that runs them over a timeline, and the one timeline builder. Pure: no clock,
 * no I/O.
 */
export { contextTooFull } from './context-too-full.ts';
export { historyLost } from './history-lost.ts';
export { outputCutOff, isCutOff } from './output-cut-off.ts';
export { toolTakeover } from './tool-takeover.ts';
export { DETECTORS, DETECTOR_NEEDS, type DetectorNeeds } from './registry.ts';
export {
  driveDetectors,
  initialStates,
  FindingSet,
  type DetectorStates,
  type DriveOptions,
  type DriveResult,
} from './drive.ts';
export { buildTimeline } from './timeline.ts';
export type { Detector, DetectorContext, DetectorStep } from './types.ts';
