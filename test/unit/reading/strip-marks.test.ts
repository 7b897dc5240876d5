/**
 * Which calls of the strip a finding names (src/reading/strip-marks.ts): its mark and label sit
 * on the call its text is about.
 */
import { describe, expect, it } from 'vitest';
import { markedCalls } from '../../../src/reading/strip-marks.ts';

const INDEX: Record<string, number> = { 't:a': 0, 't:b': 1, 't:c': 2, 't:d': 3, 't:e': 4 };
const indexOf = (traceId: string, spanId: string) => INDEX[`${traceId}:${spanId}`];
const ref = (spanId: string) => ({ traceId: 't', spanId });

describe('markedCalls', () => {
  it('context_too_full: the fullest call its text gives the usage of, not the first call over the threshold', () => {
    const details = { fullestCall: ref('e'), firstCrossingCall: ref('d') };
    expect(markedCalls('context_too_full', details, 3, indexOf)).toEqual({ index: 4, calls: [4] });
    // the fullest call is not in the strip (another run): the call it fired on
    const away = { fullestCall: { traceId: 'x', spanId: 'y' } };
    expect(markedCalls('context_too_full', away, 3, indexOf)).toEqual({ index: 3, calls: [3] });
  });

  it("tool_takeover: the episode's calls, marked on its first", () => {
    const details = { calls: [ref('b'), ref('c'), ref('d')] };
    expect(markedCalls('tool_takeover', details, 1, indexOf)).toEqual({
      index: 1,
      calls: [1, 2, 3],
    });
  });

  it('other findings: the call they are anchored on', () => {
    expect(markedCalls('history_lost', { tokensLost: 5 }, 2, indexOf)).toEqual({
      index: 2,
      calls: [2],
    });
    expect(markedCalls('output_cut_off', {}, null, indexOf)).toEqual({ index: null, calls: [] });
  });
});
