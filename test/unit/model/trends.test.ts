import { describe, expect, it } from 'vitest';
import {
  beforeAfter,
  bucketOf,
  keyOf,
  MIN_CONVERSATIONS,
  rangeStartMs,
  trendItems,
  type ConversationTrend,
} from '../../../src/model/trends.ts';

const ms = (iso: string) => Date.parse(iso);
const ns = (iso: string) => String(BigInt(ms(iso)) * 1_000_000n);
const none = { context_too_full: 0, tool_takeover: 0, history_lost: 0, output_cut_off: 0 };

function conv(
  id: string,
  first: string,
  fields: Partial<ConversationTrend> = {},
): ConversationTrend {
  return {
    conversationId: id,
    firstNs: ns(first),
    model: 'gpt-4o',
    producer: 'semconv',
    agentVersion: null,
    project: null,
    calls: 2,
    costedCalls: 0,
    costUsd: null,
    tokensOverThreshold: 0,
    findings: { ...none },
    ...fields,
  };
}

describe('bucketOf', () => {
  it('is the UTC day, or the Monday of the ISO week', () => {
    expect(bucketOf(ms('2026-12-05T23:59:59Z'), 'day')).toBe('2026-12-05');
    // 2026-12-05 is a Saturday; its week began on Monday 2026-11-30
    expect(bucketOf(ms('2026-12-05T12:00:00Z'), 'week')).toBe('2026-11-30');
    expect(bucketOf(ms('2026-11-30T00:00:00Z'), 'week')).toBe('2026-11-30');
    expect(bucketOf(ms('2026-11-29T23:59:59Z'), 'week')).toBe('2026-11-23');
  });

  it('starts a range of n days at midnight UTC, n - 1 days before today', () => {
    expect(rangeStartMs(ms('2026-12-05T03:00:00Z'), 1)).toBe(ms('2026-12-05T00:00:00Z'));
    expect(rangeStartMs(ms('2026-12-05T03:00:00Z'), 30)).toBe(ms('2026-11-06T00:00:00Z'));
  });
});

describe('keyOf', () => {
  it('names the coding agent (with its version) and is null for a library', () => {
    const cc = conv('a', '2026-12-01T00:00:00Z', {
      producer: 'claude_code_log',
      agentVersion: '2.1.332',
    });
    expect(keyOf(cc, 'agent')).toBe('Claude Code');
    expect(keyOf(cc, 'agentVersion')).toBe('Claude Code 2.1.332');
    expect(keyOf(conv('b', '2026-12-01T00:00:00Z'), 'agent')).toBeNull();
    expect(keyOf(conv('b', '2026-12-01T00:00:00Z'), 'agentVersion')).toBeNull();
  });
});

describe('trendItems', () => {
  it('sums by bucket then key (null last), cost null unless a call reported one', () => {
    const rows = [
      conv('a', '2026-12-02T10:00:00Z', { project: '/p', costedCalls: 1, costUsd: 0.5 }),
      conv('b', '2026-12-01T10:00:00Z', { findings: { ...none, history_lost: 2 } }),
      conv('c', '2026-12-02T11:00:00Z', { project: '/p', tokensOverThreshold: 150_000 }),
      conv('d', '2026-12-02T12:00:00Z'),
    ];
    expect(trendItems(rows, 'project', 'day')).toEqual([
      {
        bucket: '2026-12-01',
        key: null,
        conversations: 1,
        calls: 2,
        findings: { ...none, history_lost: 2 },
        costUsd: null,
        tokensOverThreshold: 0,
      },
      {
        bucket: '2026-12-02',
        key: '/p',
        conversations: 2,
        calls: 4,
        findings: none,
        costUsd: 0.5,
        tokensOverThreshold: 150_000,
      },
      {
        bucket: '2026-12-02',
        key: null,
        conversations: 1,
        calls: 2,
        findings: none,
        costUsd: null,
        tokensOverThreshold: 0,
      },
    ]);
    expect(trendItems(rows, 'project', 'week').map((i) => [i.bucket, i.conversations])).toEqual([
      ['2026-11-30', 2],
      ['2026-11-30', 2],
    ]);
  });
});

describe('beforeAfter', () => {
  it('puts a conversation begun at the moment after it, and says when there are too few', () => {
    const at = ms('2026-12-01T00:00:00Z');
    const rows = [
      conv('a', '2026-11-30T23:59:59Z', { findings: { ...none, context_too_full: 1 } }),
      conv('b', '2026-12-01T00:00:00Z'),
      conv('c', '2026-11-20T00:00:00Z'), // outside a 7-day side
    ];
    const { before, after, verdict } = beforeAfter(rows, at, 7);
    expect([before.conversations, after.conversations]).toEqual([1, 1]);
    expect(before.per100.context_too_full).toBe(100);
    expect(after.per100.context_too_full).toBe(0);
    expect(before.from).toBe('2026-11-24T00:00:00.000Z');
    expect(after.to).toBe('2026-12-08T00:00:00.000Z');
    expect(verdict).toBe(
      `Too few conversations to tell: 1 conversation before and 1 after; at least ${MIN_CONVERSATIONS} are needed on each side.`,
    );
    const empty = beforeAfter([], at, 7);
    expect(empty.before.per100.history_lost).toBeNull();
  });

  it('compares once each side has the minimum', () => {
    const at = ms('2026-12-01T00:00:00Z');
    const rows = Array.from({ length: 2 * MIN_CONVERSATIONS }, (_, i) =>
      conv(
        String(i),
        new Date(at + (i < MIN_CONVERSATIONS ? -1 : 1) * (i + 1) * 1000).toISOString(),
      ),
    );
    const { before, after, verdict } = beforeAfter(rows, at, 1);
    expect(before.enough && after.enough).toBe(true);
    expect(verdict).toBe(
      `Enough conversations to compare: ${MIN_CONVERSATIONS} conversations before and ${MIN_CONVERSATIONS} after.`,
    );
  });
});
