/**
 * The rate limit of the event log (src/log/event-log.ts) on an injected clock: one line per
 * kind of event and key per interval, the events in between counted and reported by the next
 * line. A real server's lines are read in test/integration/receiver/logging.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { createEventLog } from '../../../src/log/event-log.ts';

function sink() {
  const lines: Array<{ level: string; obj: object; msg: string }> = [];
  return {
    lines,
    info: (obj: object, msg: string) => lines.push({ level: 'info', obj, msg }),
    warn: (obj: object, msg: string) => lines.push({ level: 'warn', obj, msg }),
  };
}

describe('event log', () => {
  it('logs one line per kind and key per interval, and counts the rest in the next line', () => {
    let now = 1_000_000;
    const out = sink();
    const log = createEventLog(out, { intervalMs: 4_000, now: () => now });
    for (let i = 0; i < 5; i++)
      log.event('warn', 'refused_401', 'default', { status: 401 }, 'missing bearer token');
    expect(out.lines).toEqual([
      {
        level: 'warn',
        obj: { event: 'refused_401', workspace: 'default', status: 401 },
        msg: 'missing bearer token',
      },
    ]);
    now += 3_999; // not a millisecond early
    expect(log.event('warn', 'refused_401', 'default', {}, 'again')).toBe(false);
    now += 1;
    expect(log.event('warn', 'refused_401', 'default', { status: 401 }, 'again')).toBe(true);
    expect(out.lines[1]).toEqual({
      level: 'warn',
      obj: { event: 'refused_401', workspace: 'default', status: 401, suppressed: 5 },
      msg: 'again',
    });
    // counted afresh from that line
    now += 4_000;
    log.event('info', 'refused_401', 'default', {}, 'third');
    expect(out.lines[2]!.obj).not.toHaveProperty('suppressed');
  });

  it('keeps kinds and keys apart, and logs every event at interval 0', () => {
    const now = 0;
    const out = sink();
    const log = createEventLog(out, { intervalMs: 4_000, now: () => now });
    log.event('warn', 'refused_401', 'a', {}, '401 a');
    log.event('warn', 'refused_401', 'b', {}, '401 b');
    log.event('warn', 'refused_403', 'a', {}, '403 a');
    log.event('warn', 'refused_401', 'a', {}, '401 a again');
    expect(out.lines.map((l) => l.msg)).toEqual(['401 a', '401 b', '403 a']);

    const every = sink();
    const all = createEventLog(every, { intervalMs: 0, now: () => now });
    for (let i = 0; i < 3; i++) all.event('info', 'received_spans', 'a', {}, 'received');
    expect(every.lines).toHaveLength(3);
  });

  it('forgets the oldest kind and key beyond maxKeys', () => {
    let now = 0;
    const out = sink();
    const log = createEventLog(out, { intervalMs: 4_000, now: () => now, maxKeys: 2 });
    log.event('info', 'k', 'a', {}, 'a');
    log.event('info', 'k', 'b', {}, 'b');
    log.event('info', 'k', 'c', {}, 'c'); // forgets a
    now += 1;
    expect(log.event('info', 'k', 'a', {}, 'a again')).toBe(true);
    expect(log.event('info', 'k', 'c', {}, 'c again')).toBe(false);
  });
});
