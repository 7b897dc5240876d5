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

  it("writes the number as toLocaleString('en-US') does, whole or not", () => {
    const numbers = [
      0,
      7,
      999,
      1000,
      12_345,
      999_999,
      1_000_000,
      123_456_789,
      2 ** 53 - 1,
      1.5,
      1234.5,
    ];
    for (const n of [...numbers, ...numbers.map((n) => -n)])
      expect(plural(n, 'call')).toBe(`${n.toLocaleString('en-US')} ${n === 1 ? 'call' : 'calls'}`);
  });

  it('takes the number as the caller writes it', () => {
    expect(plural(15_300, 'call', 'calls', (n) => `${(n / 1000).toFixed(1)}k`)).toBe('15.3k calls');
    expect(pluralWord(1, 'was', 'were')).toBe('was');
    expect(pluralWord(2, 'was', 'were')).toBe('were');
  });
});
