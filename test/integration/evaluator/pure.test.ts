/**
 * The evaluator's pure helpers (no database): window overrides, backoff. The driver and the
 * timeline builder it uses are tested in test/unit/detectors.
 */
import { describe, expect, it } from 'vitest';
import { failureBackoffMs } from '../../../src/evaluator/evaluator.ts';
import { applyWindowOverrides, matchesModelGlob } from '../../../src/evaluator/window-overrides.ts';
import { call } from './helpers.ts';

describe('matchesModelGlob', () => {
  it.each([
    ['claude-*', 'claude-sonnet-4', true],
    ['claude-*', 'Claude-Opus-4', true],
    ['*[1m]', 'claude-sonnet-4[1m]', true],
    ['gpt-4?', 'gpt-4o', true],
    ['gpt-4?', 'gpt-4.1', false],
    ['gpt-4.1', 'gpt-4x1', false],
    ['*', '', true],
    ['claude', 'claude-sonnet-4', false],
  ])('%s matches %s: %s', (glob, model, expected) => {
    expect(matchesModelGlob(glob, model)).toBe(expected);
  });

  it('overrides the window of the first matching rule, by response or request model', () => {
    const c = call('x', 1, { responseModel: null, requestModel: 'gpt-4o' });
    const overridden = applyWindowOverrides(c, [
      { model: 'claude-*', window: 1 },
      { model: 'gpt-*', window: 64_000 },
      { model: '*', window: 2 },
    ]);
    expect(overridden).toMatchObject({ contextWindow: 64_000, windowSource: 'override' });
    expect(c.contextWindow).toBe(200_000);
    expect(applyWindowOverrides(c, [{ model: 'claude-*', window: 1 }])).toBe(c);
  });
});

describe('failureBackoffMs', () => {
  it('doubles from 1 s to at most 5 min, with ±20% jitter', () => {
    expect(failureBackoffMs(1, () => 0.5)).toBe(1000);
    expect(failureBackoffMs(3, () => 0.5)).toBe(4000);
    expect(failureBackoffMs(30, () => 0.5)).toBe(300_000);
    expect(failureBackoffMs(1, () => 0)).toBe(800);
    expect(failureBackoffMs(1, () => 1)).toBe(1200);
  });
});
