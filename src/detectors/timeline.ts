/**
 * The one timeline builder: a conversation's calls and compactions in the order the detectors
 * read them. Pure; the store only loads the rows (src/store/timeline.ts), the evaluator and
 * `rotscope analyze` build the timeline with this.
 */
import type { Compaction, LlmCall } from '../model/calls.ts';
import type { TimelineItem } from '../model/calls.ts';

interface Keyed {
  ns: bigint;
  /** 0 for a compaction, 1 for a call: a compaction goes before a call at the same ns. */
  rank: 0 | 1;
  /** The call's span id; compactions keep their input order. */
  id: string;
  index: number;
  item: TimelineItem;
}

/**
 * The timeline of `calls` and `compactions`, in any input order: calls by `(startNs, spanId)`,
 * each compaction at its `atNs` and before every call that starts at or after it. Returns a
 * new array; the inputs are not changed.
 */
export function buildTimeline(
  calls: readonly LlmCall[],
  compactions: readonly Compaction[],
): TimelineItem[] {
  const keyed: Keyed[] = [];
  calls.forEach((call, index) =>
    keyed.push({
      ns: BigInt(call.startNs),
      rank: 1,
      id: call.spanId,
      index,
      item: { type: 'call', call },
    }),
  );
  compactions.forEach((compaction, index) =>
    keyed.push({
      ns: BigInt(compaction.atNs),
      rank: 0,
      id: '',
      index,
      item: { type: 'compaction', compaction },
    }),
  );
  keyed.sort(
    (a, b) =>
      (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0) ||
      a.rank - b.rank ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) ||
      a.index - b.index,
  );
  return keyed.map((k) => k.item);
}
