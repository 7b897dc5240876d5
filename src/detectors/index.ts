/**
 * The detector registry: the four context-rot detectors of DESIGN §6, and helpers to feed a
 * conversation's timeline to all of them. Pure: no clock, no I/O.
 */
import type { Compaction, LlmCall } from '../model/calls.ts';
import type { DetectorId, FindingDraft } from '../model/findings.ts';
import { contextTooFull } from './context-too-full.ts';
import { historyLost } from './history-lost.ts';
import { outputCutOff } from './output-cut-off.ts';
import { toolTakeover } from './tool-takeover.ts';
import type { Detector, DetectorContext, TimelineItem } from './types.ts';

export { contextTooFull } from './context-too-full.ts';
export { historyLost } from './history-lost.ts';
export { outputCutOff, isCutOff } from './output-cut-off.ts';
export { toolTakeover } from './tool-takeover.ts';
export type { Detector, DetectorContext, DetectorStep, TimelineItem } from './types.ts';

/** The four detectors, in DETECTOR_IDS order. */
export const DETECTORS: readonly Detector<unknown>[] = Object.freeze([
  contextTooFull as Detector<unknown>,
  toolTakeover as Detector<unknown>,
  historyLost as Detector<unknown>,
  outputCutOff as Detector<unknown>,
]);

/** Each detector's state, as stored between evaluations (plain JSON). */
export type DetectorStates = Record<DetectorId, unknown>;

/** The states before a conversation's first item. */
export function initialStates(): DetectorStates {
  const states = {} as DetectorStates;
  for (const d of DETECTORS) states[d.id] = d.initial();
  return states;
}

/** What {@link runDetectors} returns. */
export interface RunResult {
  /** The new states (a new object; the input states are not changed). */
  states: DetectorStates;
  /**
   * Findings to upsert by (detector, anchor), in the order they first appeared. When a
   * detector reported an anchor more than once during these items, only its last version is
   * kept (the most complete details, the highest severity).
   */
  findings: FindingDraft[];
}

/**
 * Feeds `items` (already in timeline order, see {@link buildTimeline}) to all four detectors,
 * starting from `states` (a missing or undefined entry starts from the detector's initial
 * state, so `{}` is valid for a new conversation). Never mutates its inputs.
 */
export function runDetectors(
  states: Partial<DetectorStates>,
  items: readonly TimelineItem[],
  context: DetectorContext,
): RunResult {
  const next = {} as DetectorStates;
  const byKey = new Map<string, FindingDraft>();
  for (const detector of DETECTORS) {
    let state = states[detector.id] === undefined ? detector.initial() : states[detector.id];
    for (const item of items) {
      const step = detector.step(state as Readonly<unknown>, item, context);
      state = step.state;
      for (const f of step.findings) {
        const key = `${f.detector}\u0000${f.anchor}`;
        byKey.delete(key);
        byKey.set(key, f);
      }
    }
    next[detector.id] = state;
  }
  return { states: next, findings: orderFindings([...byKey.values()], items) };
}

/** Orders findings by the timeline position of their call, then by detector order. */
function orderFindings(findings: FindingDraft[], items: readonly TimelineItem[]): FindingDraft[] {
  const position = new Map<string, number>();
  items.forEach((item, i) => {
    if (item.type === 'call') position.set(`${item.call.traceId}:${item.call.spanId}`, i);
  });
  const rank = (id: DetectorId) => DETECTORS.findIndex((d) => d.id === id);
  const pos = (f: FindingDraft) => position.get(`${f.traceId}:${f.spanId}`) ?? -1;
  return findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => pos(a.f) - pos(b.f) || rank(a.f.detector) - rank(b.f.detector) || a.i - b.i)
    .map(({ f }) => f);
}

function compareNs(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Builds a timeline from calls and compactions: calls by (startNs, spanId), compactions at
 * `atNs`, a compaction before a call that starts at the same nanosecond. Returns a new array.
 */
export function buildTimeline(
  calls: readonly LlmCall[],
  compactions: readonly Compaction[],
): TimelineItem[] {
  const keyed = [
    ...calls.map((call) => ({
      ns: call.startNs,
      tie: 1,
      id: call.spanId,
      item: { type: 'call', call } as const,
    })),
    ...compactions.map((compaction, i) => ({
      ns: compaction.atNs,
      tie: 0,
      id: String(i).padStart(12, '0'),
      item: { type: 'compaction', compaction } as const,
    })),
  ];
  keyed.sort(
    (a, b) => compareNs(a.ns, b.ns) || a.tie - b.tie || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  return keyed.map((k) => k.item);
}
