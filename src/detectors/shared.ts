/**
 * Small pure helpers the four detectors share: call references, formatting for
 * summaries, tool shares, and bounded lists that keep detector state constant-size.
 */
import type { LlmCall } from '../model/calls.ts';
import type { FindingDraft } from '../model/findings.ts';
import { groupThousands } from '../model/plural.ts';

/** The model a call is reported under: the response model, else the request model. */
export function modelOf(call: LlmCall): string | null {
  return call.responseModel ?? call.requestModel;
}

/** `${traceId}:${spanId}`, the anchor of call-level findings. */
export function callAnchor(call: Pick<LlmCall, 'traceId' | 'spanId'>): string {
  return `${call.traceId}:${call.spanId}`;
}

/** A ratio as a percentage with one decimal (0.87345 -> 87.3). */
export function percentOf(ratio: number): number {
  return Math.round(ratio * 1000) / 10;
}

/**
 * A ratio as a whole percentage for summaries, rounded down (0.849 -> 84, 0.57 -> 57): the rule
 * the status line and the console write shares by too.
 */
export { wholePercent } from '../model/usage-rules.ts';

/** A ratio rounded to three decimals, for details (0.45123 -> 0.451). */
export function roundRatio(ratio: number): number {
  return Math.round(ratio * 1000) / 1000;
}

/** An integer with thousands separators, independent of the locale (174000 -> "174,000"). */
export function formatInt(n: number): string {
  const sign = n < 0 ? '-' : '';
  return sign + groupThousands(String(Math.round(Math.abs(n))));
}

/** The size tool shares are ratios of: the rule lives beside the held-results rule. */
export { partsTotal } from '../model/held-results.ts';

/**
 * Returns a new list where the entry with `key` is replaced by `entry` and moved to the end
 * (most recently used), dropping the oldest entries beyond `cap`. Never mutates `list`.
 */
export function touchBounded<T>(
  list: readonly T[],
  keyOf: (entry: T) => string,
  entry: T,
  cap: number,
): T[] {
  const key = keyOf(entry);
  const rest = list.filter((e) => keyOf(e) !== key);
  rest.push(entry);
  return rest.length > cap ? rest.slice(rest.length - cap) : rest;
}

/** A finding's prose: its summary line and its details. */
export type FindingProse = Pick<FindingDraft, 'summary' | 'details'>;

/**
 * A draft whose summary and details are built when first read, once (issue 39). A detector that
 * reports an anchor again at every call (an episode that goes on, a fuller call of a run) pays
 * for the prose only of the report the finding set keeps: the others are replaced unread.
 * `prose` must read only what does not change after the call (detector states are never
 * mutated). The two are own enumerable properties, so a spread or `JSON.stringify` of the
 * draft reads them like any other.
 */
export function withProse(
  draft: Omit<FindingDraft, 'summary' | 'details'>,
  prose: () => FindingProse,
): FindingDraft {
  let built: FindingProse | undefined;
  const read = () => (built ??= prose());
  // a literal with the getters: a third faster than defining them on `draft`
  return {
    detector: draft.detector,
    anchor: draft.anchor,
    severity: draft.severity,
    kind: draft.kind,
    conversationId: draft.conversationId,
    streamKey: draft.streamKey,
    runId: draft.runId,
    traceId: draft.traceId,
    spanId: draft.spanId,
    model: draft.model,
    get summary() {
      return read().summary;
    },
    get details() {
      return read().details;
    },
  };
}
