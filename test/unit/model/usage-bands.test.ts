/**
 * The colour bands of a usage share come from the workspace's knobs (src/model/usage-bands.ts):
 * with the default knobs they are the status line's, share for share; with other knobs amber
 * starts where context_too_full fires and red where it turns critical.
 */
import { describe, expect, it } from 'vitest';
import { formatStatusLine } from '../../../src/cli/statusline.ts';
import { DEFAULT_THRESHOLDS } from '../../../src/model/thresholds.ts';
import { usageBands, usageLevelIn, type UsageLevel } from '../../../src/model/usage-bands.ts';

/** The status line's colour of a share, read from its escape codes. */
function statusLineLevel(tokens: number, window: number): UsageLevel {
  const line = formatStatusLine(null, { tokens, window }, true);
  if (line.startsWith('\x1b[31m')) return 'red';
  if (line.startsWith('\x1b[33m')) return 'amber';
  if (line.startsWith('\x1b[2m')) return 'dim';
  return 'normal';
}

describe('usage bands', () => {
  it("the default knobs give the status line's colour for every share", () => {
    const bands = usageBands(DEFAULT_THRESHOLDS);
    expect(bands).toEqual({ dimBelow: 0.6, amberFrom: 0.7, redFrom: 0.85 });
    for (let tokens = 0; tokens <= 200_000; tokens += 100) {
      const share = tokens / 200_000;
      expect(usageLevelIn(share, bands), String(share)).toBe(statusLineLevel(tokens, 200_000));
    }
  });

  it("a workspace's knobs move amber and red; dim never reaches past amber", () => {
    const bands = usageBands({ usageThreshold: 0.4, usageCritical: 0.6 });
    expect(bands).toEqual({ dimBelow: 0.4, amberFrom: 0.4, redFrom: 0.6 });
    expect([0.39, 0.4, 0.59, 0.6].map((s) => usageLevelIn(s, bands))).toEqual([
      'dim',
      'amber',
      'amber',
      'red',
    ]);
    expect(usageBands({ usageThreshold: 0.8, usageCritical: 0.95 })).toEqual({
      dimBelow: 0.6,
      amberFrom: 0.8,
      redFrom: 0.95,
    });
  });
});
