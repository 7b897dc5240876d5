/**
 * The evaluator's keyed state (src/evaluator/state-copies.ts): a copy answers only for the token
 * it was stored under, and the copies stay within their count and size, the least recently
 * evaluated dropped first.
 */
import { describe, expect, it } from 'vitest';
import { StateCopies } from '../../../src/evaluator/state-copies.ts';

describe('StateCopies', () => {
  it('counts a copy only at the position it was stored with', () => {
    const copies = new StateCopies();
    copies.set('ws', 'c1', { token: '7', bytes: 10, at: '100:s1' }, { v: 1 });
    expect(copies.get('ws', 'c1', '7', '100:s1')).toEqual({ v: 1 });
    // an earlier version stored a later position under the same token: not this copy
    expect(copies.get('ws', 'c1', '7', '200:s2')).toBeUndefined();
    expect(copies.get('ws', 'c1', '7', null)).toBeUndefined();
  });

  it('answers a conversation’s state only for the token it was stored under', () => {
    const copies = new StateCopies();
    const state = { v: 1 };
    copies.set('ws', 'c1', { token: '7', bytes: 10 }, state);
    expect(copies.get('ws', 'c1', '7')).toBe(state);
    expect(copies.get('ws', 'c1', '8')).toBeUndefined();
    expect(copies.get('other', 'c1', '7')).toBeUndefined();
    // a newer save replaces the copy: the older token no longer answers
    copies.set('ws', 'c1', { token: '8', bytes: 12 }, { v: 2 });
    expect(copies.get('ws', 'c1', '7')).toBeUndefined();
    expect(copies.get('ws', 'c1', '8')).toEqual({ v: 2 });
    expect([copies.size, copies.bytes]).toEqual([1, 12]);
  });

  it('keeps at most `limit` conversations, dropping the least recently evaluated', () => {
    const copies = new StateCopies(2);
    copies.set('ws', 'a', { token: '1', bytes: 1 }, 'a');
    copies.set('ws', 'b', { token: '1', bytes: 1 }, 'b');
    copies.set('ws', 'a', { token: '2', bytes: 1 }, 'a2'); // a is now the most recent
    copies.set('ws', 'c', { token: '1', bytes: 1 }, 'c');
    expect(copies.get('ws', 'b', '1')).toBeUndefined();
    expect(copies.get('ws', 'a', '2')).toBe('a2');
    expect(copies.get('ws', 'c', '1')).toBe('c');
    expect([copies.size, copies.bytes]).toEqual([2, 2]);
  });

  it('keeps at most `limitBytes` of states, and none larger than that alone', () => {
    const copies = new StateCopies(100, 100);
    copies.set('ws', 'a', { token: '1', bytes: 40 }, 'a');
    copies.set('ws', 'b', { token: '1', bytes: 40 }, 'b');
    copies.set('ws', 'c', { token: '1', bytes: 40 }, 'c');
    expect(copies.get('ws', 'a', '1')).toBeUndefined();
    expect([copies.size, copies.bytes]).toEqual([2, 80]);
    copies.set('ws', 'huge', { token: '1', bytes: 101 }, 'huge');
    expect(copies.get('ws', 'huge', '1')).toBeUndefined();
    expect([copies.size, copies.bytes]).toEqual([2, 80]);
  });
});
