/**
 * The CSV answers' pure parts (src/api/csv.ts): RFC 4180 quoting, values that are not text,
 * which requests ask for CSV, and paging through a cursor list to its end.
 */
import { describe, expect, it } from 'vitest';
import {
  allPages,
  csvField,
  csvLine,
  csvReadSize,
  csvStream,
  wantsCsv,
} from '../../../src/api/csv.ts';

describe('csvField', () => {
  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\rhere', '"cr\rhere"'],
    ['', ''],
    [null, ''],
    [undefined, ''],
    [42, '42'],
    [0.125, '0.125'],
    [false, 'false'],
    [['claude-sonnet-4-5', 'gpt-4.1'], 'claude-sonnet-4-5; gpt-4.1'],
    [[1, 2], '1; 2'],
    [{ usage: 1, note: 'a,"b"' }, '"{""usage"":1,""note"":""a,\\""b\\""""}"'],
    [[{ key: 'main' }], '"[{""key"":""main""}]"'],
    // text a spreadsheet would run as a formula (OWASP's CSV injection), not numbers
    ['=HYPERLINK("http://x","y")', '"\'=HYPERLINK(""http://x"",""y"")"'],
    ['+1', "'+1"],
    ['-conv', "'-conv"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tcmd', "'\tcmd"],
    ['\rcmd', '"\'\rcmd"'],
    [['=1+1', 'b'], "'=1+1; b"],
    [-3, '-3'],
    [[-1, 2], '-1; 2'],
    ['a=b', 'a=b'],
  ])('%j → %s', (value, text) => expect(csvField(value)).toBe(text));

  it('writes a line of the columns asked for, in their order, CRLF-terminated', () => {
    expect(csvLine(['id', 'missing', 'summary'], { summary: 'x, y', id: '7', other: 1 })).toBe(
      '7,,"x, y"\r\n',
    );
  });
});

describe('wantsCsv', () => {
  it.each([
    [undefined, undefined, false],
    [undefined, 'application/json', false],
    [undefined, '*/*', false],
    [undefined, 'text/csv', true],
    [undefined, 'TEXT/CSV; charset=utf-8', true],
    [undefined, 'text/csv, application/json', true],
    [undefined, 'application/json, text/csv;q=0.5', false],
    [undefined, 'application/json;q=0.4, text/csv;q=0.5', true],
    [undefined, 'text/csv;q=0', false],
    ['csv', 'application/json', true],
    ['json', 'text/csv', false],
  ] as const)('format %s, Accept %s → %s', (format, accept, csv) =>
    expect(wantsCsv(format, accept)).toBe(csv),
  );
});

describe('allPages and csvStream', () => {
  it('reads a cursor list to its end and streams the header and every row', async () => {
    const items = Array.from({ length: 5 }, (_, i) => ({ id: String(i + 1), n: i }));
    const asked: Array<number | undefined> = [];
    const pages = allPages<{ id: string; n: number }, number>(undefined, async (after) => {
      asked.push(after);
      const from = after ?? 0;
      const page = items.slice(from, from + 2);
      return { items: page, next: from + 2 < items.length ? from + 2 : null };
    });
    let text = '';
    for await (const chunk of csvStream(['id', 'n'], pages)) text += String(chunk);
    expect(text).toBe('id,n\r\n1,0\r\n2,1\r\n3,2\r\n4,3\r\n5,4\r\n');
    expect(asked).toEqual([undefined, 2, 4]);
  });

  it('writes the header alone for an empty list', async () => {
    const pages = allPages<{ id: string }, number>(undefined, async () => ({
      items: [],
      next: null,
    }));
    let text = '';
    for await (const chunk of csvStream(['id'], pages)) text += String(chunk);
    expect(text).toBe('id\r\n');
  });
});

describe('csvReadSize', () => {
  it("reads the request's limit at a time when it gives one, else the largest page", () => {
    expect(csvReadSize('/api/findings?format=csv&limit=2', 2, 200)).toBe(2);
    expect(csvReadSize('/api/findings?format=csv', 50, 200)).toBe(200);
    expect(csvReadSize('/api/findings', 50, 200)).toBe(200);
    expect(csvReadSize('/api/findings?q=limit', 50, 200)).toBe(200);
  });
});
