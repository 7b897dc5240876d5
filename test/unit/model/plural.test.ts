import { describe, expect, it } from 'vitest';
import { plural, pluralWord } from '../../../src/model/plural.ts';

describe('plural', () => {
  it.each([
    [0, 'compaction', undefined, '0 compactions'],
    [1, 'compaction', undefined, '1 compaction'],
    [2, 'compaction', undefined, '2 compactions'],
    [1, 'tool result', undefined, '1 tool result'],
    [1204, 'call', undefined, '1,204 calls'],
    [1, 'entry', 'entries', '1 entry'],
    [3, 'entry', 'entries', '3 entries'],
  ])('%i %s', (count, singular, pluralForm, expected) => {
    expect(plural(count, singular, pluralForm)).toBe(expected);
  });

  it('takes the number as the caller writes it', () => {
    expect(plural(15_300, 'call', 'calls', (n) => `${(n / 1000).toFixed(1)}k`)).toBe('15.3k calls');
    expect(pluralWord(1, 'was', 'were')).toBe('was');
    expect(pluralWord(2, 'was', 'were')).toBe('were');
  });
});
