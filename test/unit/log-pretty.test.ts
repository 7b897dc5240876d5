/** Readable log lines for a terminal (src/log/pretty.ts): the same fields, none dropped, nothing thrown. */
import { describe, expect, it } from 'vitest';
import { prettyLine, prettyStream, wantsPrettyLogs } from '../../src/log/pretty.ts';

const at = new Date(2026, 11, 5, 4, 5, 6).getTime();

describe('prettyLine', () => {
  it('time, level, message, then the fields (pino’s own left out)', () =>
    expect(
      prettyLine(
        JSON.stringify({
          level: 30,
          time: at,
          pid: 1,
          hostname: 'h',
          service: 'rotscope',
          msg: 'rotscope listening on http://x',
          address: 'http://x',
          n: 3,
          note: 'two words',
        }),
      ),
    ).toBe(
      '04:05:06 INFO  rotscope listening on http://x  address=http://x n=3 note="two words"\n',
    ));

  it('an error field shows its stack, indented', () => {
    const line = prettyLine(
      JSON.stringify({
        level: 50,
        time: at,
        msg: 'request failed',
        err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at f' },
      }),
    );
    expect(line).toBe('04:05:06 ERROR request failed  err=\n  Error: boom\n      at f\n');
  });

  it.each(['not json', '[1,2]', 'null', ''])('passes %j through unchanged', (text) =>
    expect(prettyLine(text)).toBe(text),
  );

  it('a chunk of several records becomes several lines', () => {
    let out = '';
    prettyStream({ write: (t) => (out += t) }).write(
      `${JSON.stringify({ level: 40, time: at, msg: 'a' })}\n${JSON.stringify({ level: 30, time: at, msg: 'b' })}\n`,
    );
    expect(out).toBe('04:05:06 WARN  a\n04:05:06 INFO  b\n');
  });
});

describe('wantsPrettyLogs', () => {
  it.each([
    ['auto', true, true],
    ['auto', false, false],
    ['json', true, false],
    ['pretty', false, true],
  ] as const)('%s with a terminal %s → %s', (format, tty, want) =>
    expect(wantsPrettyLogs(format, tty)).toBe(want),
  );
});
