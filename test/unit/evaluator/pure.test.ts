/**
 * The evaluator's pure helpers (no database): window overrides, backoff. The driver and the
 * timeline builder it uses are tested in test/unit/detectors.
 */
import { describe, expect, it } from 'vitest';
import { failureBackoffMs } from '../../../src/evaluator/loop.ts';
import { applyWindowOverrides } from '../../../src/evaluator/window-overrides.ts';
import { contextWindowFor } from '../../../src/ingest/windows.ts';
import { call } from '../../helpers/calls.ts';

describe('applyWindowOverrides', () => {
  it.each([
    ['claude-*', 'claude-sonnet-4', true],
    ['claude-*', 'Claude-Opus-4', true],
    ['*[1m]', 'claude-sonnet-4[1m]', true],
    ['gpt-4?', 'gpt-4o', true],
    ['gpt-4?', 'gpt-4.1', false],
    ['gpt-4.1', 'gpt-4x1', false],
    ['claude', 'claude-sonnet-4', false],
    // The matcher is ingest's: a provider prefix does not hide the model.
    ['claude-*', 'anthropic/claude-sonnet-4', true],
    ['claude-*', 'us.anthropic.claude-sonnet-4', true],
  ])('glob %s matches %s: %s', (glob, model, expected) => {
    const c = call('x', 1, { responseModel: model, requestModel: model });
    const applied = applyWindowOverrides(c, [{ model: glob, window: 64_000 }]);
    expect(applied.windowSource === 'override' && applied.contextWindow === 64_000).toBe(expected);
  });

  it('overrides the window of the first matching rule, by the response model, else the request model', () => {
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

  it('gives a call the window ingest would give it today, for every override and usage', () => {
    const overrides = [
      { model: 'claude-opus-*', window: 500_000 },
      { model: 'gpt-4o', window: 64_000 },
    ];
    for (const model of ['claude-opus-4', 'claude-sonnet-4', 'gpt-4o', 'my-model']) {
      for (const tokens of [1_000, 100_000, 600_000]) {
        // As ingested before the overrides existed (window from the catalog, or unknown).
        const before = contextWindowFor(model, tokens, []);
        const c = call('x', 1, {
          responseModel: model,
          requestModel: model,
          contextTokens: tokens,
          contextWindow: before.window,
          windowSource: before.source,
        });
        const want = contextWindowFor(model, tokens, overrides);
        expect(applyWindowOverrides(c, overrides), `${model} ${tokens}`).toMatchObject({
          contextWindow: want.window,
          windowSource: want.source,
        });
      }
    }
  });

  it('moves the window up when the observed usage exceeds the override (source inferred), as ingest does', () => {
    const c = call('x', 1, { contextTokens: 150_000 });
    expect(applyWindowOverrides(c, [{ model: 'claude-*', window: 100_000 }])).toMatchObject({
      contextWindow: 200_000,
      windowSource: 'inferred',
    });
  });

  it('gives the catalog window back to a call whose override was removed', () => {
    const c = call('x', 1, { contextWindow: 64_000, windowSource: 'override' });
    expect(applyWindowOverrides(c, [])).toMatchObject({
      contextWindow: 200_000,
      windowSource: 'catalog',
    });
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
