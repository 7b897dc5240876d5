/**
 * The evaluator's memory of new calls (src/store/call-memo.ts): when it may stand in for the
 * stored rows, and when it must not (a write under way, another epoch, an unknown commit).
 */
import { describe, expect, it } from 'vitest';
import { CallMemo } from '../../../src/store/call-memo.ts';
import type { LlmCall } from '../../../src/model/calls.ts';
import { llmCallRow, readBack, type TimelinePosition } from '../../../src/store/timeline.ts';
import { call, compaction } from '../../helpers/calls.ts';

const ws = 'default';
/** A call as ingest hands it over: its row and its parts. */
const written = (c: LlmCall) => ({ row: llmCallRow(c), parts: c.parts });
const key = { workspaceId: ws, conversationId: 'c' };
const rows = (...seconds: number[]) => seconds.map((s) => written(call('c', s)));
const at = (second: number): TimelinePosition => {
  const c = call('c', second);
  return { ns: c.startNs, spanId: c.spanId };
};
const seconds = (page: { calls: Array<{ spanId: string }> } | undefined) =>
  page?.calls.map((c) => Number(c.spanId.slice(2)));

/** Writes `seconds` as one committed ingest transaction; returns the token the row keeps. */
function write(memo: CallMemo, ...s: number[]): string {
  const handed = memo.begin(ws, new Map([['c', rows(...s)]]));
  handed.committed();
  return handed.tokens.get('c')!;
}

describe('CallMemo', () => {
  it("holds a new conversation's calls under the token its row was created with, in order", () => {
    const memo = new CallMemo();
    const token = write(memo, 3, 1);
    expect(write(memo, 2)).toBe(token);
    const page = memo.pageFor({ ...key, callsToken: token }, null, 500);
    expect(seconds(page)).toEqual([1, 2, 3]);
    expect(page!.calls[0]).toEqual(readBack(written(call('c', 1))));
    // another token on the row: another writer since; none
    expect(memo.pageFor({ ...key, callsToken: '42' }, null, 500)).toBeUndefined();
    expect(memo.pageFor({ ...key, callsToken: null }, null, 500)).toBeUndefined();
  });

  it('stands in for nothing while a write is under way (it may have committed already)', () => {
    const memo = new CallMemo();
    const token = write(memo, 1);
    const handed = memo.begin(ws, new Map([['c', rows(2)]]));
    expect(memo.pageFor({ ...key, callsToken: token }, null, 500)).toBeUndefined();
    handed.committed();
    expect(seconds(memo.pageFor({ ...key, callsToken: token }, null, 500))).toEqual([1, 2]);
  });

  it('keeps its entry after a rolled-back write, and forgets it after one of unknown outcome', () => {
    const memo = new CallMemo();
    const token = write(memo, 1);
    memo.begin(ws, new Map([['c', rows(2)]])).abandoned(false);
    expect(seconds(memo.pageFor({ ...key, callsToken: token }, null, 500))).toEqual([1]);
    memo.begin(ws, new Map([['c', rows(2)]])).abandoned('unknown');
    expect(memo.pageFor({ ...key, callsToken: token }, null, 500)).toBeUndefined();
    // the next write starts an entry under a token the row does not hold
    expect(write(memo, 3)).not.toBe(token);
  });

  it('drops what an evaluation judged, and answers only at or after that position', () => {
    const memo = new CallMemo();
    const token = write(memo, 1, 2, 3);
    memo.judged(key, token, at(2));
    expect(memo.calls).toBe(1);
    expect(seconds(memo.pageFor({ ...key, callsToken: token }, at(2), 500))).toEqual([3]);
    expect(memo.pageFor({ ...key, callsToken: token }, at(1), 500)).toBeUndefined();
    expect(memo.pageFor({ ...key, callsToken: token }, null, 500)).toBeUndefined();
  });

  it('starts a new epoch after an evaluation that read the calls; writes of the old one are not kept', () => {
    const memo = new CallMemo();
    const old = write(memo, 1);
    const late = memo.begin(ws, new Map([['c', rows(5)]])); // begun under the old token
    memo.started(key, '7', at(1), [compaction('c', 0.5), compaction('c', 1.5)]);
    late.committed(); // its row write met token 7, not its own: the row has none now
    expect(memo.pageFor({ ...key, callsToken: old }, at(1), 500)).toBeUndefined();
    const page = memo.pageFor({ ...key, callsToken: '7' }, at(1), 500);
    expect(page?.calls).toEqual([]);
    expect(page?.compactions.map((c) => c.atNs)).toEqual([compaction('c', 1.5).atNs]);
    expect(write(memo, 2)).toBe('7');
    expect(seconds(memo.pageFor({ ...key, callsToken: '7' }, at(1), 500))).toEqual([2]);
  });

  it('leaves calls sharing a start, and pages of `limit` calls or more, to the database', () => {
    const memo = new CallMemo();
    const same = written(call('c', 2, { spanId: 'c-zzz' }));
    const handed = memo.begin(ws, new Map([['c', [...rows(1, 2), same]]]));
    handed.committed();
    const token = handed.tokens.get('c')!;
    expect(memo.pageFor({ ...key, callsToken: token }, null, 500)).toBeUndefined();
    const other = new CallMemo();
    const t = write(other, 1, 2, 3);
    expect(other.pageFor({ ...key, callsToken: t }, null, 3)).toBeUndefined();
    expect(seconds(other.pageFor({ ...key, callsToken: t }, null, 4))).toEqual([1, 2, 3]);
    // the start of the position counts too
    expect(other.pageFor({ ...key, callsToken: t }, { ns: at(1).ns, spanId: 'c-0' }, 4)).toBe(
      undefined,
    );
  });

  it('keeps at most `limitCalls` calls, dropping the least recently used conversations', () => {
    const memo = new CallMemo(10, 3);
    const a = memo.begin(ws, new Map([['a', [written(call('a', 1)), written(call('a', 2))]]]));
    a.committed();
    const b = memo.begin(ws, new Map([['b', [written(call('b', 1)), written(call('b', 2))]]]));
    b.committed();
    expect(memo.size).toBe(1);
    expect(memo.calls).toBe(2);
    expect(
      memo.pageFor(
        { workspaceId: ws, conversationId: 'a', callsToken: a.tokens.get('a')! },
        null,
        9,
      ),
    ).toBeUndefined();
    expect(
      memo.pageFor(
        { workspaceId: ws, conversationId: 'b', callsToken: b.tokens.get('b')! },
        null,
        9,
      )?.calls.length,
    ).toBe(2);
  });

  it('reads a call back as jsonb gives its parts: what JSON keeps, keys by length then bytes', () => {
    const parts = {
      unit: 'chars',
      total: Number.NaN,
      tools: {
        zz: 1,
        a: undefined,
        bb: [1, undefined, Number.POSITIVE_INFINITY],
        é: 2,
        ['__proto__']: 4,
        ab: 3,
      },
      system: 12,
    };
    const back = readBack(written(call('c', 1, { parts: parts as never })));
    expect(back.parts).toEqual(JSON.parse(JSON.stringify(parts)));
    expect(Object.keys(back.parts!)).toEqual(['unit', 'tools', 'total', 'system']);
    expect(Object.keys((back.parts as { tools: object }).tools)).toEqual([
      'ab',
      'bb',
      'zz',
      'é',
      '__proto__',
    ]);
    // ASCII keys alone: by length, then by bytes
    const ascii = readBack(
      written(call('c', 2, { parts: { tools: { b: 1, ccc: 2, aa: 3, a: 4 } } as never })),
    );
    expect(Object.keys((ascii.parts as { tools: object }).tools)).toEqual(['a', 'b', 'aa', 'ccc']);
  });
});
