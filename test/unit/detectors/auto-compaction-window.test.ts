/**
 * context_too_full on the window Claude Code's automatic compaction shows (issue 19 §3): an
 * auto-compaction with 150k–200k tokens before it is what Claude Code does on a 200k window, so
 * the model the stream was using ran on 200k, whatever the catalog's default for it is now
 * (claude-opus-4-8 in Claude Code 2.1.68 auto-compacted at 169,431 tokens; the catalog assumes
 * 1M when the version is unknown). A window the agent stated, an override, or a usage above
 * 200k is never lowered; other producers' compactions say nothing about Claude Code's window.
 */
import { describe, expect, it } from 'vitest';
import {
  contextTooFull,
  type ContextTooFullState,
} from '../../../src/detectors/context-too-full.ts';
import type { Compaction, LlmCall, TimelineItem, WindowSource } from '../../../src/model/calls.ts';
import { DEFAULT_THRESHOLDS, type FindingDraft } from '../../../src/model/findings.ts';
import { call as baseCall, compaction as baseCompaction } from '../../helpers/calls.ts';

const CONTEXT = { thresholds: DEFAULT_THRESHOLDS };

let second = 0;
function call(
  tokens: number,
  p: { model?: string; window?: number; source?: WindowSource; producer?: string } = {},
): TimelineItem {
  second += 1;
  const model = p.model ?? 'claude-opus-4-8';
  const c: LlmCall = baseCall('s', second, {
    producer: p.producer ?? 'claude_code',
    requestModel: model,
    responseModel: model,
    contextTokens: tokens,
    contextWindow: p.window ?? 1_000_000,
    windowSource: p.source ?? 'assumed',
    runId: 's',
    streamKey: 's|main',
  });
  return { type: 'call', call: c };
}

function compacted(
  tokensBefore: number | null,
  trigger: Compaction['trigger'] = 'auto',
): TimelineItem {
  second += 1;
  return {
    type: 'compaction',
    compaction: {
      ...baseCompaction('s', second),
      evidence: 'claude_code_event',
      streamKey: 's|main',
      runId: 's',
      trigger,
      tokensBefore,
      tokensAfter: 5_000,
    },
  };
}

/** The last version of each finding, after feeding every item. */
function feed(items: TimelineItem[]): FindingDraft[] {
  let state: ContextTooFullState = contextTooFull.initial();
  const last = new Map<string, FindingDraft>();
  for (const item of items) {
    const step = contextTooFull.step(state, item, CONTEXT);
    state = step.state;
    for (const f of step.findings) last.set(f.anchor, f);
  }
  return [...last.values()];
}

type Snapshot = { usageTokens: number; window: number; windowSource: string; percent: number };
const fullest = (f: FindingDraft) => f.details.fullestCall as Snapshot;

describe('context_too_full: the 200k window a Claude Code auto-compaction shows', () => {
  it('judges the run on 200k once it auto-compacts at 169k, whatever the catalog assumed (1M)', () => {
    const before = [call(60_000), call(120_000), call(165_000)];
    expect(feed(before)).toEqual([]); // 16.5% of an assumed 1M: quiet
    const found = feed([...before, compacted(169_431)]);
    expect(found).toHaveLength(1);
    expect(found[0]!.severity).toBe('warning');
    expect(fullest(found[0]!)).toMatchObject({
      usageTokens: 165_000,
      window: 200_000,
      windowSource: 'compaction',
      percent: 82.5,
    });
    expect(found[0]!.summary).toContain('82% full (165,000 of 200,000 tokens)');
    expect(found[0]!.summary).toContain("Claude Code's automatic compaction at 169,431 tokens");
    expect(found[0]!.summary).not.toContain('assumed');
  });

  it('calls after the compaction are judged on 200k too, and escalate', () => {
    const found = feed([call(120_000), compacted(170_000), call(20_000), call(175_000)]);
    expect(found).toHaveLength(1);
    expect(found[0]!.severity).toBe('critical');
    expect(fullest(found[0]!)).toMatchObject({ usageTokens: 175_000, window: 200_000 });
  });

  it('lowers a catalog window too (claude-opus-4-8 is 1M in the catalog for Claude Code 2.1.167+)', () => {
    const found = feed([call(150_000, { source: 'catalog' }), compacted(172_047)]);
    expect(fullest(found[0]!)).toMatchObject({ window: 200_000, windowSource: 'compaction' });
  });

  it.each([
    ['the model id says 1M', { model: 'claude-opus-4-8[1m]', source: 'model_id' as const }],
    ['an override', { source: 'override' as const }],
    ['usage above 200k was inferred', { source: 'inferred' as const }],
  ])('never lowers a window the agent or the user stated: %s', (_what, p) => {
    expect(feed([call(165_000, p), compacted(169_431), call(160_000, p)])).toEqual([]);
  });

  it('not when the model already held more than 200k in the run', () => {
    expect(feed([call(413_000), call(150_000), compacted(169_431), call(160_000)])).toEqual([]);
  });

  it('usage above 200k after the compaction lifts it again (the finding stays, never retracted)', () => {
    const items = [call(150_000), compacted(169_431)];
    expect(fullest(feed(items)[0]!)).toMatchObject({ usageTokens: 150_000, window: 200_000 });
    const found = feed([...items, call(260_000, { source: 'inferred' }), call(150_000)]);
    expect(found).toHaveLength(1);
    expect(found[0]!.severity).toBe('warning');
    expect(fullest(found[0]!)).toMatchObject({
      usageTokens: 260_000,
      window: 1_000_000,
      windowSource: 'inferred',
    });
  });

  it.each([
    ['a manual /compact', compacted(170_000, 'manual')],
    ['an auto-compaction far below 200k (a custom threshold)', compacted(90_000)],
    ['an auto-compaction near a 1M window', compacted(950_000)],
    ['no token count', compacted(null)],
  ])('says nothing about the window: %s', (_what, item) => {
    expect(feed([call(165_000), item])).toEqual([]);
  });

  it("another producer's auto-compaction says nothing about its window", () => {
    const semconv = {
      producer: 'semconv',
      model: 'gemini-3-pro',
      window: 1_048_576,
      source: 'catalog' as const,
    };
    expect(feed([call(165_000, semconv), compacted(169_431)])).toEqual([]);
  });

  it('only the model the stream was using is lowered', () => {
    // the run's fullest is claude-opus-5-5 (16% of 1M) until the compaction shows that
    // claude-opus-4-8, the model compacted, ran on 200k: its fullest call was 75% full
    const found = feed([
      call(150_000, { model: 'claude-opus-4-8' }),
      call(160_000, { model: 'claude-opus-5-5', source: 'catalog' }),
      call(100_000, { model: 'claude-opus-4-8' }),
      compacted(169_431),
      call(180_000, { model: 'claude-opus-5-5', source: 'catalog' }),
    ]);
    expect(found).toHaveLength(1);
    expect(fullest(found[0]!)).toMatchObject({ usageTokens: 150_000, window: 200_000 });
    expect(found[0]!.model).toBe('claude-opus-4-8');
  });

  it('a call with no window (a model no rule knows) is not judged', () => {
    const unknown = baseCall('s', 99, {
      producer: 'claude_code',
      requestModel: 'claude-sonnet-5-5',
      responseModel: 'claude-sonnet-5-5',
      contextTokens: 190_000,
      contextWindow: null,
      windowSource: null,
      runId: 's',
      streamKey: 's|main',
    });
    expect(feed([{ type: 'call', call: unknown }])).toEqual([]);
  });
});
