/** "did you mean": the closest known flag for a typo, none for a flag far from all (src/cli/flag-suggest.ts). */
import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { closestFlag, editDistance, flagError } from '../../src/cli/flag-suggest.ts';

const SERVE = ['port', 'host', 'data-dir', 'database-url', 'log-level', 'log-format'];

describe('closestFlag', () => {
  it.each([
    ['--prot', 'port'], // two letters swapped
    ['--hots', 'host'],
    ['--data-dri', 'data-dir'],
    ['--datadir', 'data-dir'], // a dash left out
    ['--log-levl', 'log-level'],
    ['--databas', 'database-url'], // the one flag it begins
    ['--port=1', 'port'],
  ])('%s → --%s', (given, want) => expect(closestFlag(given, SERVE)).toBe(want));

  it.each(['--zzzzzz', '--x', '--verbose', '--log'])(
    '%s → nothing (too far, or two flags begin so)',
    (given) => expect(closestFlag(given, SERVE)).toBeUndefined(),
  );

  it('counts a swap of neighbours as one edit', () => {
    expect(editDistance('prot', 'port')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
  });
});

describe('flagError', () => {
  const fail = (args: string[]) => {
    try {
      parseArgs({
        args,
        options: { port: { type: 'string' }, 'dry-run': { type: 'boolean' } },
        strict: true,
      });
    } catch (error) {
      return error;
    }
    throw new Error('parsed');
  };

  it('names the command, the flag and the one meant', () =>
    expect(flagError('serve', fail(['--prot', '1']), ['port', 'dry-run'])).toBe(
      'rotscope serve: unknown flag --prot; did you mean --port?',
    ));

  it('says a value is missing, or not taken', () => {
    expect(flagError('serve', fail(['--port']), ['port'])).toBe(
      'rotscope serve: --port needs a value (--port VALUE)',
    );
    expect(flagError('x', fail(['--dry-run=yes']), ['dry-run'])).toBe(
      'rotscope x: --dry-run takes no value',
    );
    // a value starting with a dash after a space reads as a flag: say how to write it
    expect(flagError('import', fail(['--port', '-1']), ['port'])).toBe(
      'rotscope import: a value of --port that starts with a dash is written --port=VALUE',
    );
  });

  it('leaves any other error to the caller', () =>
    expect(flagError('serve', new Error('bug'), [])).toBeUndefined());
});
