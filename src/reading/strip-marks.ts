/**
 * Which calls of the strip a finding names, so its mark and its label sit on the call its text
 * is about (issue 23 §6): context_too_full fires on the first call over the threshold but its
 * text gives the fullest call's usage, so it is marked on the fullest call; a tool_takeover
 * names the calls of its episode ("took 44%, 39%, 38% of the input over 3 calls"); every other
 * finding is about the call it is anchored on. Pure: the caller maps call ids to indexes.
 */

/** A call's strip index by its trace and span id; undefined when it is not in the strip. */
export type IndexOf = (traceId: string, spanId: string) => number | undefined;

export interface MarkedCalls {
  /** The call the finding's text is about (its mark and label); null when not in the strip. */
  index: number | null;
  /** Every call of the strip its text counts, in strip order (tool_takeover: the episode's). */
  calls: number[];
}

const record = (v: unknown): Record<string, unknown> | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

/** The strip index of a `{ traceId, spanId }` of a finding's details. */
function callIn(value: unknown, indexOf: IndexOf): number | undefined {
  const ref = record(value);
  const traceId = ref?.['traceId'];
  const spanId = ref?.['spanId'];
  return typeof traceId === 'string' && typeof spanId === 'string'
    ? indexOf(traceId, spanId)
    : undefined;
}

/** The calls a finding names: `anchor` is the index of the call it is anchored on. */
export function markedCalls(
  detector: string,
  details: Record<string, unknown>,
  anchor: number | null,
  indexOf: IndexOf,
): MarkedCalls {
  const own = { index: anchor, calls: anchor === null ? [] : [anchor] };
  if (detector === 'context_too_full') {
    const fullest = callIn(details['fullestCall'], indexOf);
    return fullest === undefined ? own : { index: fullest, calls: [fullest] };
  }
  if (detector === 'tool_takeover' && Array.isArray(details['calls'])) {
    // the calls that made it fire, and its latest call as the episode grew (issue 36 §5)
    const calls = [...new Set([...details['calls'], details['lastCall']])]
      .map((c) => callIn(c, indexOf))
      .filter((i): i is number => i !== undefined)
      .filter((i, k, all) => all.indexOf(i) === k)
      .sort((a, b) => a - b);
    if (calls.length === 0) return own;
    return { index: anchor ?? calls[0]!, calls };
  }
  return own;
}
