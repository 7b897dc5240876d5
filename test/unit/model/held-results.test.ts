/**
 * The held-results rule (src/model/held-results.ts): what tool_takeover counts and the run
 * view's strip stacks. Every tool_takeover fixture case is run through the detector and through
 * `heldPerCall`: each share a finding gives is the share the strip draws on that call. Then the
 * rule's own cases: results added up per stream, emptied by a compaction or a history cut, side
 * calls and calls without sizes left out, capped at the input.
 */
import { describe, expect, it } from 'vitest';
import { toolTakeover, type ToolTakeoverState } from '../../../src/detectors/tool-takeover.ts';
import type { TimelineItem } from '../../../src/model/calls.ts';
import { DEFAULT_THRESHOLDS, type FindingDraft } from '../../../src/model/findings.ts';
import { heldPerCall, type HeldItem } from '../../../src/model/held-results.ts';
import { buildItems, loadCases, type ItemDesc } from '../detectors/builder.ts';

const toHeld = (items: TimelineItem[]): HeldItem[] =>
  items.map((item) =>
    item.type === 'compaction'
      ? { type: 'compaction', streamKey: item.compaction.streamKey }
      : { type: 'call', ...item.call },
  );

function takeovers(items: TimelineItem[], thresholds = DEFAULT_THRESHOLDS): FindingDraft[] {
  let state: ToolTakeoverState = toolTakeover.initial();
  const out: FindingDraft[] = [];
  for (const item of items) {
    const step = toolTakeover.step(state, item, { thresholds });
    state = step.state;
    out.push(...step.findings);
  }
  return out;
}

describe('tool_takeover and the strip count the same results', () => {
  for (const c of loadCases('tool_takeover')) {
    it(c.name, () => {
      const items = buildItems(c.calls);
      const counted = heldPerCall(toHeld(items));
      const calls = items.flatMap((item) => (item.type === 'call' ? [item.call] : []));
      expect(counted).toHaveLength(calls.length);
      for (const finding of takeovers(items, { ...DEFAULT_THRESHOLDS, ...c.thresholds })) {
        const tool = finding.details['tool'] as string;
        for (const episodeCall of finding.details['calls'] as Array<{
          spanId: string;
          share: number;
        }>) {
          const k = calls.findIndex((call) => call.spanId === episodeCall.spanId);
          const strip = counted[k]!;
          expect(strip, episodeCall.spanId).not.toBeNull();
          // the detector reports its shares to three decimals
          expect((strip.tools[tool] ?? 0) / strip.total).toBeCloseTo(episodeCall.share, 3);
        }
      }
    });
  }
});

const spans = (tools: Record<string, number>, ctx: number, extra: Partial<ItemDesc> = {}) =>
  ({ ctx, parts: { source: 'tool_spans', tools }, ...extra }) as ItemDesc;
const toolsOf = (descs: ItemDesc[]) =>
  heldPerCall(toHeld(buildItems(descs))).map((c) => (c === null ? null : c.tools));

describe('heldPerCall', () => {
  it("adds up each call's new results per stream, each tool capped at the input", () => {
    expect(
      toolsOf([
        spans({ Read: 20_000 }, 35_000),
        spans({ Read: 20_000 }, 56_000),
        spans({ Bash: 6_000 }, 63_000),
        spans({ Read: 60_000 }, 64_000),
      ]),
    ).toEqual([
      { Read: 20_000 },
      { Read: 40_000 },
      { Read: 40_000, Bash: 6_000 },
      { Read: 64_000, Bash: 6_000 },
    ]);
  });

  it('a fall in usage (history cut) and a compaction of the stream empty them', () => {
    expect(
      toolsOf([
        spans({ Read: 20_000 }, 35_000),
        spans({ Bash: 10 }, 14_000),
        spans({ Read: 5_000 }, 20_000),
        { compaction: {} },
        spans({ Bash: 7 }, 21_000),
      ]),
    ).toEqual([{ Read: 20_000 }, { Bash: 10 }, { Bash: 10, Read: 5_000 }, { Bash: 7 }]);
  });

  it("side calls, calls without sizes and other streams' calls neither count nor change it", () => {
    expect(
      toolsOf([
        spans({ Read: 20_000 }, 35_000),
        spans({ Read: 1_000 }, 30_000, { side: 'compact' }),
        { ctx: 10_000 },
        spans({ Read: 3_000 }, 12_000, { agent: 'helper' }),
        spans({}, 40_000),
      ]),
    ).toEqual([{ Read: 20_000 }, null, null, { Read: 3_000 }, { Read: 20_000 }]);
  });

  it('parts measured from the messages already say what the input holds', () => {
    expect(
      toolsOf([
        { ctx: 30_000, parts: { tools: { read_file: 9_000 } } },
        { ctx: 40_000, parts: { tools: { read_file: 9_000 } } },
      ]),
    ).toEqual([{ read_file: 9_000 }, { read_file: 9_000 }]);
  });
});
