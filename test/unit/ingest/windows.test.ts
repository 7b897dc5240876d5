import { describe, expect, it } from 'vitest';
import { catalogWindow, contextWindowFor } from '../../../src/ingest/windows.ts';

describe('catalogWindow', () => {
  it.each([
    ['claude-opus-4-6', 200_000],
    ['claude-sonnet-4-20250514', 200_000],
    ['claude-sonnet-4-5', 200_000],
    ['claude-opus-4-6[1m]', 1_000_000],
    ['claude-sonnet-4-5-1m', 1_000_000],
    ['us.anthropic.claude-3-5-sonnet-20240620-v1:0', 200_000],
    ['anthropic/claude-3-haiku', 200_000],
    ['claude-instant-1.2', 100_000],
    ['gpt-4.1', 1_047_576],
    ['gpt-4.1-mini-2025-04-14', 1_047_576],
    ['gpt-4o', 128_000],
    ['gpt-4o-mini-2024-07-18', 128_000],
    ['gpt-4-turbo', 128_000],
    ['gpt-4', 8_192],
    ['gpt-3.5-turbo', 16_385],
    ['gpt-5', 400_000],
    ['gpt-5-mini', 400_000],
    ['o1', 200_000],
    ['o1-2024-12-17', 200_000],
    ['o1-mini', 128_000],
    ['o3-mini', 200_000],
    ['o4-mini', 200_000],
    ['gemini-2.5-pro', 1_048_576],
    ['models/gemini-2.0-flash', 1_048_576],
    ['gemini-1.5-flash', 1_048_576],
    ['gemini-1.5-pro', 2_097_152],
    ['my-local-model', null],
  ] as Array<[string, number | null]>)('%s → %s', (model, window) => {
    expect(catalogWindow(model)).toBe(window);
  });
});

describe('contextWindowFor', () => {
  it('catalog', () => {
    expect(contextWindowFor('claude-opus-4-6', 50_000, [])).toEqual({
      window: 200_000,
      source: 'catalog',
    });
  });
  it('override glob wins over catalog (first match, case-insensitive)', () => {
    const o = [
      { model: 'CLAUDE-*', window: 500_000 },
      { model: 'claude-opus-*', window: 1 },
    ];
    expect(contextWindowFor('claude-opus-4-6', 10, o)).toEqual({
      window: 500_000,
      source: 'override',
    });
    expect(contextWindowFor('gpt-4o', 5, [{ model: 'gpt-4?', window: 9 }])).toEqual({
      window: 9,
      source: 'override',
    });
    expect(contextWindowFor('my-local-model', 10, [{ model: 'my-*', window: 32_000 }])).toEqual({
      window: 32_000,
      source: 'override',
    });
  });
  it('observed usage above the window moves it to the next known size up', () => {
    expect(contextWindowFor('claude-sonnet-4-5', 450_000, [])).toEqual({
      window: 1_000_000,
      source: 'inferred',
    });
    expect(contextWindowFor('gpt-4o', 130_000, [])).toEqual({
      window: 131_072,
      source: 'inferred',
    });
    expect(contextWindowFor('x', 40_000, [{ model: 'x', window: 32_000 }])).toEqual({
      window: 100_000,
      source: 'inferred',
    });
    expect(contextWindowFor('claude-opus-4-6', 200_000, [])).toEqual({
      window: 200_000,
      source: 'catalog',
    });
  });
  it('unknown or missing model: no window', () => {
    expect(contextWindowFor('my-local-model', 5_000, [])).toEqual({ window: null, source: null });
    expect(contextWindowFor(null, 5_000, [])).toEqual({ window: null, source: null });
  });
});
