/** The evaluator's pure helpers (no database): globs, backoff, draft collapsing, timeline merge. */
import { describe, expect, it } from 'vitest';
import { failureBackoffMs } from '../../../src/evaluator/evaluator.ts';
import { DraftSet } from '../../../src/evaluator/run.ts';
import { applyWindowOverrides, matchesModelGlob } from '../../../src/evaluator/window-overrides.ts';
import type { FindingDraft } from '../../../src/model/findings.ts';
import { mergeTimeline } from '../../../src/store/timeline.ts';
import { call, compaction } from './helpers.ts';

describe('matchesModelGlob', () => {
  it.each([
    ['claude-*', 'claude-sonnet-4', true],
    ['claude-*', 'Claude-Opus-4', true],
    ['*[1m]', 'claude-sonnet-4[1m]', true],
    ['gpt-4?', 'gpt-4o', true],
    ['gpt-4?', 'gpt-4.1', false],
    ['gpt-4.1', 'gpt-4x1', false],
    ['*', '', true],
    ['claude', 'claude-sonnet-4', false],
  ])('%s matches %s: %s', (glob, model, expected) => {
    expect(matchesModelGlob(glob, model)).toBe(expected);
  });

  it('overrides the window of the first matching rule, by response or request model', () => {
    const c = call('x', 1, { responseModel: null, requestModel: 'gpt-4o' });
    const overridden = applyWindowOverrides(c, [
      { model: 'claude-*', window: 1 },
      { model: 'gpt-*', window: 64_000 },
      { model: '*', window: 2 },
    ]);
    expect(overridden).toMatchObject({ contextWindow: 64_000, windowSource: 'override' });
    expect(c.contextWindow).toBe(200_000);
    expect(applyWindowOverrides(c, [{ model: 'claude-*', window: 1 }])).toBe(c);
  });
});

describe('failureBackoffMs', () => {
  it('doubles from 1 s to at most 5 min, with ±20% jitter', () => {
    expect(failureBackoffMs(1, () => 0.5)).toBe(1000);
    expect(failureBackoffMs(3, () => 0.5)).toBe(4000);
    expect(failureBackoffMs(30, () => 0.5)).toBe(300_000);
    expect(failureBackoffMs(1, () => 0)).toBe(800);
    expect(failureBackoffMs(1, () => 1)).toBe(1200);
  });
});

describe('DraftSet', () => {
  const draft = (
    anchor: string,
    severity: FindingDraft['severity'],
    summary: string,
  ): FindingDraft => ({
    detector: 'context_too_full',
    anchor,
    severity,
    kind: null,
    conversationId: 'c',
    streamKey: 'c',
    runId: 'r',
    traceId: 't',
    spanId: 's',
    model: null,
    summary,
    details: {},
  });

  it('keeps the latest draft per anchor at the highest severity seen', () => {
    const set = new DraftSet();
    set.add(draft('a', 'warning', 'first'));
    set.add(draft('b', 'info', 'other'));
    set.add(draft('a', 'critical', 'second'));
    set.add(draft('a', 'warning', 'third'));
    expect(set.values().map((d) => [d.anchor, d.severity, d.summary])).toEqual([
      ['b', 'info', 'other'],
      ['a', 'critical', 'third'],
    ]);
  });
});

describe('mergeTimeline', () => {
  it('puts a compaction before calls starting at or after it, trailing ones last', () => {
    const items = mergeTimeline(
      [call('m', 1), call('m', 2), call('m', 3)],
      [compaction('m', 0.5), compaction('m', 2), compaction('m', 4)],
    );
    expect(
      items.map((i) =>
        i.type === 'call' ? i.call.spanId : `compaction@${i.compaction.sourceKey}`,
      ),
    ).toEqual([
      'compaction@compaction-m-0.5',
      'm-000001',
      'compaction@compaction-m-2',
      'm-000002',
      'm-000003',
      'compaction@compaction-m-4',
    ]);
  });
});
