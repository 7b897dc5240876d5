import { describe, expect, it } from 'vitest';
import {
  DETECTORS,
  buildTimeline,
  contextTooFull,
  historyLost,
  initialStates,
  outputCutOff,
  runDetectors,
  toolTakeover,
} from '../../../src/detectors/index.ts';
import type { Detector, DetectorContext, TimelineItem } from '../../../src/detectors/types.ts';
import {
  DEFAULT_THRESHOLDS,
  DETECTOR_IDS,
  type DetectorId,
  type FindingDraft,
} from '../../../src/model/findings.ts';
import { buildItems, deepFreeze, loadAllCases, type FixtureCase } from './builder.ts';

const BY_ID: Record<DetectorId, Detector<unknown>> = {
  context_too_full: contextTooFull as Detector<unknown>,
  tool_takeover: toolTakeover as Detector<unknown>,
  history_lost: historyLost as Detector<unknown>,
  output_cut_off: outputCutOff as Detector<unknown>,
};

function contextOf(c: FixtureCase): DetectorContext {
  return { thresholds: { ...DEFAULT_THRESHOLDS, ...c.thresholds } };
}

interface Run {
  emitted: FindingDraft[];
  /** Last version per anchor, in order of first appearance. */
  final: FindingDraft[];
}

type Mode = 'plain' | 'frozen' | 'json';

/** Steps one detector through the items; `json` serializes the state between every step. */
function run(
  detector: Detector<unknown>,
  items: TimelineItem[],
  context: DetectorContext,
  mode: Mode,
): Run {
  let state: unknown = detector.initial();
  const emitted: FindingDraft[] = [];
  for (const item of items) {
    if (mode === 'json') state = JSON.parse(JSON.stringify(state));
    if (mode === 'frozen') deepFreeze(state);
    const step = detector.step(state as Readonly<unknown>, item, context);
    state = step.state;
    emitted.push(...step.findings);
  }
  const final = new Map<string, FindingDraft>();
  for (const f of emitted) final.set(f.anchor, f);
  return { emitted, final: [...final.values()] };
}

const suites = loadAllCases();

it('has a fixture file for each of the four detectors', () => {
  expect(suites.map((s) => s.detector).sort()).toEqual([...DETECTOR_IDS].sort());
});

for (const { detector: id, cases } of suites) {
  describe(id, () => {
    const detector = BY_ID[id];
    it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
      const { emitted, final } = run(detector, buildItems(c.calls), contextOf(c), 'plain');
      expect(final).toHaveLength(c.expected.length);
      c.expected.forEach((want, i) => expect(final[i]).toMatchObject(want));
      for (const f of final) expect(f.detector).toBe(id);
      if (c.emissions !== undefined) expect(emitted).toHaveLength(c.emissions);
    });

    it.each(cases.map((c) => [c.name, c] as const))(
      'never mutates its inputs, and its state survives JSON between steps: %s',
      (_name, c) => {
        const context = contextOf(c);
        const plain = run(detector, buildItems(c.calls), context, 'plain');
        const items = deepFreeze(buildItems(c.calls));
        const frozen = run(detector, items, deepFreeze(context), 'frozen');
        const json = run(detector, buildItems(c.calls), context, 'json');
        expect(frozen.emitted).toEqual(plain.emitted);
        expect(json.emitted).toEqual(plain.emitted);
        expect(items).toEqual(buildItems(c.calls));
      },
    );
  });
}

describe('runDetectors', () => {
  const context = { thresholds: DEFAULT_THRESHOLDS };
  const items = buildItems([
    { ctx: 150000, parts: { tools: { Read: 60000 } } },
    { ctx: 160000, parts: { tools: { Read: 60000 } } },
    {
      ctx: 175000,
      parts: { tools: { Read: 60000 } },
      finish: 'max_tokens',
      toolCall: true,
      toolName: 'Edit',
    },
    { compaction: { before: 175000, after: 9000 } },
    { ctx: 20000, parts: { tools: {} } },
  ]);

  it('runs all four and keeps the last version of each anchor, in timeline order', () => {
    const { findings, states } = runDetectors({}, items, context);
    expect(findings.map((f) => [f.detector, f.anchor, f.severity, f.kind])).toEqual([
      ['context_too_full', 'c1|r1', 'critical', null],
      ['tool_takeover', 'c1|main|Read|s0', 'warning', null],
      ['output_cut_off', 't1:s2', 'critical', null],
      ['history_lost', 't1:s4', 'info', 'compacted'],
    ]);
    expect(Object.keys(states).sort()).toEqual([...DETECTOR_IDS].sort());
  });

  it('gives the same findings fed in two batches with the states stored as JSON in between', () => {
    const whole = runDetectors({}, items, context);
    const first = runDetectors(initialStates(), items.slice(0, 2), context);
    const stored = JSON.parse(JSON.stringify(first.states)) as typeof first.states;
    const second = runDetectors(stored, items.slice(2), context);
    const merged = new Map<string, FindingDraft>();
    for (const f of [...first.findings, ...second.findings])
      merged.set(`${f.detector}|${f.anchor}`, f);
    expect([...merged.values()].sort((a, b) => a.anchor.localeCompare(b.anchor))).toEqual(
      [...whole.findings].sort((a, b) => a.anchor.localeCompare(b.anchor)),
    );
    expect(JSON.parse(JSON.stringify(second.states))).toEqual(whole.states);
  });

  it('does not mutate the states or items it is given', () => {
    const states = deepFreeze(runDetectors({}, items.slice(0, 2), context).states);
    const frozenItems = deepFreeze(buildItems([{ ctx: 10000 }, { ctx: 190000, finish: 'length' }]));
    expect(() => runDetectors(states, frozenItems, context)).not.toThrow();
  });

  it('lists the four detectors in DETECTOR_IDS order', () => {
    expect(DETECTORS.map((d) => d.id)).toEqual([...DETECTOR_IDS]);
  });
});

describe('buildTimeline', () => {
  it('orders calls by numeric startNs then spanId, a compaction before a call at the same ns', () => {
    const [a, b, c] = buildItems([{ span: 'b' }, { span: 'a' }, { span: 'c' }]).map((i) => {
      if (i.type !== 'call') throw new Error('call expected');
      return i.call;
    });
    if (!a || !b || !c) throw new Error('three calls expected');
    const calls = [
      { ...a, startNs: '10' },
      { ...b, startNs: '10' },
      { ...c, startNs: '9' },
    ];
    const compactionItem = buildItems([{ compaction: {} }])[0];
    if (compactionItem?.type !== 'compaction') throw new Error('compaction expected');
    const compaction = { ...compactionItem.compaction, atNs: '10' };
    const timeline = buildTimeline(calls, [compaction]);
    expect(timeline.map((i) => (i.type === 'call' ? i.call.spanId : 'compaction'))).toEqual([
      'c',
      'compaction',
      'a',
      'b',
    ]);
  });
});
