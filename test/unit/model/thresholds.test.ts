/** The one definition of the Context rot thresholds' bounds, used by the API and the CLI. */
import { describe, expect, it } from 'vitest';
import {
  COUNT_THRESHOLDS,
  DEFAULT_THRESHOLDS,
  RATIO_THRESHOLDS,
  THRESHOLD_KEYS,
  checkThresholds,
  thresholdsSchema,
  type ThresholdKey,
} from '../../../src/model/thresholds.ts';

const naming = (values: Record<string, unknown>) => ({
  name: (key: ThresholdKey) => `t.${key}`,
  shown: (key: ThresholdKey) => String(values[key]),
});

function check(changes: Record<string, unknown>) {
  const values = { ...DEFAULT_THRESHOLDS, ...changes };
  return checkThresholds(values, naming(values));
}

describe('thresholds', () => {
  it('accepts the defaults, and they satisfy the schema', () => {
    expect(check({})).toEqual({ ok: true, thresholds: DEFAULT_THRESHOLDS });
    expect(thresholdsSchema.parse(DEFAULT_THRESHOLDS)).toEqual(DEFAULT_THRESHOLDS);
  });

  it('splits every key into ratios and counts', () => {
    expect([...RATIO_THRESHOLDS, ...COUNT_THRESHOLDS].sort()).toEqual([...THRESHOLD_KEYS].sort());
    expect(COUNT_THRESHOLDS).toEqual(['toolPersistCalls', 'dropMinTokens']);
  });

  it.each([
    [{ toolShare: 1.5 }, ['t.toolShare must be a ratio between 0 and 1 (got 1.5)']],
    [{ dropRatio: -0.1 }, ['t.dropRatio must be a ratio between 0 and 1 (got -0.1)']],
    [{ systemShrink: Number.NaN }, ['t.systemShrink must be a ratio between 0 and 1 (got NaN)']],
    [
      { usageThreshold: Infinity },
      ['t.usageThreshold must be a ratio between 0 and 1 (got Infinity)'],
    ],
    [{ toolPersistCalls: 0 }, ['t.toolPersistCalls must be a positive integer (got 0)']],
    [{ dropMinTokens: 2.5 }, ['t.dropMinTokens must be a positive integer (got 2.5)']],
    [{ dropMinTokens: 2 ** 60 }, [`t.dropMinTokens must be a positive integer (got ${2 ** 60})`]],
    [{ dropMinTokens: '2000' }, ['t.dropMinTokens must be a positive integer (got 2000)']],
    [{ usageCritical: 0.5 }, ['t.usageCritical (0.5) must be at least t.usageThreshold (0.7)']],
    [
      { usageThreshold: 2, systemShrink: 7 },
      [
        't.usageThreshold must be a ratio between 0 and 1 (got 2)',
        't.systemShrink must be a ratio between 0 and 1 (got 7)',
      ],
    ],
    [
      { toolPersistCalls: -1, toolShare: 2, usageCritical: 0.6 },
      [
        't.toolShare must be a ratio between 0 and 1 (got 2)',
        't.toolPersistCalls must be a positive integer (got -1)',
        't.usageCritical (0.6) must be at least t.usageThreshold (0.7)',
      ],
    ],
  ])('refuses %j with every problem named', (changes, errors) => {
    // each error with the knob it names first (the API places it with that knob)
    const keys = errors.map((error) => /^t\.(\w+)/.exec(error)![1]);
    expect(check(changes)).toEqual({ ok: false, errors, keys });
  });

  it('accepts the edges: ratios 0 and 1, counts 1, usageCritical equal to usageThreshold', () => {
    const edges = {
      usageThreshold: 1,
      usageCritical: 1,
      toolShare: 0,
      toolPersistCalls: 1,
      dropMinTokens: 1,
    };
    expect(check(edges)).toEqual({ ok: true, thresholds: { ...DEFAULT_THRESHOLDS, ...edges } });
  });
});
