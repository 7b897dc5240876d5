/** `rotscope statusline`'s arguments (src/cli/statusline.ts): `--segment`, or nothing. */
import { describe, expect, it } from 'vitest';
import { formatStatusLine, statuslineArgs } from '../../../src/cli/statusline.ts';

describe('statuslineArgs', () => {
  it('takes nothing, or --segment', () => {
    expect(statuslineArgs([])).toEqual({ ok: true, options: { segment: false } });
    expect(statuslineArgs(['--segment'])).toEqual({ ok: true, options: { segment: true } });
  });

  it('names an argument it does not take', () => {
    expect(statuslineArgs(['--segment', 'extra'])).toEqual({
      ok: false,
      reason: 'unknown argument "extra" (statusline takes --segment, or nothing)',
    });
  });

  it('the segment is the line without its repository and branch', () => {
    const reading = { tokens: 126_000, window: 1_000_000 };
    const git = { repo: 'rotscope', branch: 'main' };
    expect(formatStatusLine(git, reading, false)).toBe('rotscope main · ctx 12% 126k/1M');
    expect(formatStatusLine(null, reading, false)).toBe('ctx 12% 126k/1M');
  });
});
