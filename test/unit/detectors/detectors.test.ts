import { describe, expect, it } from 'vitest';
import {
  DETECTORS,
  FindingSet,
  buildTimeline,
  contextTooFull,
  driveDetectors,
  historyLost,
  initialStates,
  outputCutOff,
  toolTakeover,
} from '../../../src/detectors/index.ts';
import type { TimelineItem } from '../../../src/model/calls.ts';
import type { Detector, DetectorContext } from '../../../src/detectors/types.ts';
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

type Mode = 'plain' | 'frozen' | 'json';

/**
 * Steps one detector through the items by hand and returns every draft it emitted (repeats
 * of an anchor included); `json` serializes the state between every step.
 */
function emissions(
  detector: Detector<unknown>,
  items: TimelineItem[],
  context: DetectorContext,
  mode: Mode,
): FindingDraft[] {
  let state: unknown = detector.initial();
  const emitted: FindingDraft[] = [];
  for (const item of items) {
    if (mode === 'json') state = JSON.parse(JSON.stringify(state));
    if (mode === 'frozen') deepFreeze(state);
    const step = detector.step(state as Readonly<unknown>, item, context);
    state = step.state;
    emitted.push(...step.findings);
  }
  return emitted;
}

const suites = loadAllCases();

it('has a fixture file for each of the four detectors', () => {
  expect(suites.map((s) => s.detector).sort()).toEqual([...DETECTOR_IDS].sort());
});

for (const { detector: id, cases } of suites) {
  describe(id, () => {
    const detector = BY_ID[id];
    it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
      const items = buildItems(c.calls);
      const final = driveDetectors({}, items, contextOf(c), {
        detectors: [detector],
      }).findings.values();
      expect(final).toHaveLength(c.expected.length);
      c.expected.forEach((want, i) => expect(final[i]).toMatchObject(want));
      for (const f of final) expect(f.detector).toBe(id);
      if (c.emissions !== undefined) {
        expect(emissions(detector, items, contextOf(c), 'plain')).toHaveLength(c.emissions);
      }
    });

    it.each(cases.map((c) => [c.name, c] as const))(
      'never mutates its inputs, and its state survives JSON between steps: %s',
      (_name, c) => {
        const context = contextOf(c);
        const plain = emissions(detector, buildItems(c.calls), context, 'plain');
        const items = deepFreeze(buildItems(c.calls));
        const frozen = emissions(detector, items, deepFreeze(context), 'frozen');
        const json = emissions(detector, buildItems(c.calls), context, 'json');
        expect(frozen).toEqual(plain);
        expect(json).toEqual(plain);
        expect(items).toEqual(buildItems(c.calls));
      },
    );
  });
}

describe('driveDetectors', () => {
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
  const summary = (findings: readonly FindingDraft[]) =>
    findings.map((f) => [f.detector, f.anchor, f.severity, f.kind]);

  it('runs all four, one finding per anchor with its latest details, in the order first reported', () => {
    const { findings, states } = driveDetectors({}, items, context);
    expect(summary(findings.values())).toEqual([
      ['context_too_full', 'c1|r1', 'critical', null],
      ['tool_takeover', 'c1|main|Read|s0', 'warning', null],
      ['output_cut_off', 't1:s2', 'critical', null],
      ['history_lost', 't1:s4', 'info', 'compacted'],
    ]);
    const full = findings.values()[0]!;
    expect(full.details.fullestCall).toMatchObject({ spanId: 's2', usageTokens: 175000 });
    expect(Object.keys(states).sort()).toEqual([...DETECTOR_IDS].sort());
  });

  it('gives the same findings fed in two batches with the states stored as JSON in between', () => {
    const whole = driveDetectors({}, items, context);
    const first = driveDetectors(initialStates(), items.slice(0, 2), context);
    const stored = JSON.parse(JSON.stringify(first.states)) as typeof first.states;
    const second = driveDetectors(stored, items.slice(2), context, { findings: first.findings });
    expect(second.findings).toBe(first.findings);
    expect(second.findings.values()).toEqual(whole.findings.values());
    expect(JSON.parse(JSON.stringify(second.states))).toEqual(whole.states);
  });

  it('never lowers the severity of an anchor reported again, and keeps the latest details', () => {
    // A detector that reports one anchor critical, then warning with newer details.
    const flapping: Detector<number> = {
      id: 'context_too_full',
      initial: () => 0,
      step: (n, item) => {
        if (item.type !== 'call') return { state: n, findings: [] };
        const severity = n === 0 ? 'critical' : 'warning';
        return {
          state: n + 1,
          findings: [
            { ...full, anchor: 'one', severity, summary: `report ${n + 1}`, details: { n: n + 1 } },
          ],
        };
      },
    };
    const full = driveDetectors({}, items, context).findings.values()[0]!;
    const { findings } = driveDetectors({}, items, context, {
      detectors: [flapping as Detector<unknown>],
    });
    expect(findings.values().map((f) => [f.anchor, f.severity, f.summary, f.details])).toEqual([
      ['one', 'critical', 'report 4', { n: 4 }],
    ]);
  });

  it('keeps a context_too_full finding critical when its run, forgotten after 64 others, comes back below the critical line', () => {
    // Run r0 turns critical; 64 newer runs push it out of the detector's bounded state; a late
    // call of r0 then starts the run afresh and reports the same anchor as a warning.
    const descs = [
      { run: 'r0', ctx: 180000 },
      ...Array.from({ length: 64 }, (_, i) => ({ run: `r${i + 1}`, ctx: 1000 })),
      { run: 'r0', ctx: 150000 },
    ];
    const emitted = emissions(
      contextTooFull as Detector<unknown>,
      buildItems(descs),
      context,
      'plain',
    );
    expect(emitted.map((f) => f.severity)).toEqual(['critical', 'warning']);
    const { findings } = driveDetectors({}, buildItems(descs), context);
    expect(summary(findings.values().filter((f) => f.detector === 'context_too_full'))).toEqual([
      ['context_too_full', 'c1|r0', 'critical', null],
    ]);
  });

  it('calls afterCall after every call with the states after it', () => {
    const seen: [string, unknown][] = [];
    const { states } = driveDetectors({}, items, context, {
      afterCall: (call, after) => seen.push([call.spanId, JSON.parse(JSON.stringify(after))]),
    });
    expect(seen.map(([span]) => span)).toEqual(['s0', 's1', 's2', 's4']);
    expect(seen.at(-1)?.[1]).toEqual(JSON.parse(JSON.stringify(states)));
  });

  it('does not mutate the states or items it is given', () => {
    const states = deepFreeze(driveDetectors({}, items.slice(0, 2), context).states);
    const frozenItems = deepFreeze(buildItems([{ ctx: 10000 }, { ctx: 190000, finish: 'length' }]));
    expect(() => driveDetectors(states, frozenItems, context)).not.toThrow();
  });

  it('lists the four detectors in DETECTOR_IDS order', () => {
    expect(DETECTORS.map((d) => d.id)).toEqual([...DETECTOR_IDS]);
  });
});

describe('FindingSet', () => {
  const draft = (anchor: string, severity: FindingDraft['severity'], summary: string) =>
    ({ ...buildDraft(), anchor, severity, summary }) satisfies FindingDraft;
  function buildDraft(): FindingDraft {
    return {
      detector: 'context_too_full',
      anchor: 'a',
      severity: 'info',
      kind: null,
      conversationId: 'c',
      streamKey: 'c',
      runId: 'r',
      traceId: 't',
      spanId: 's',
      model: null,
      summary: '',
      details: {},
    };
  }

  it('keeps the latest draft per anchor at the highest severity seen, in first-reported order', () => {
    const set = new FindingSet();
    set.add(draft('a', 'warning', 'first'));
    set.add(draft('b', 'info', 'other'));
    set.add(draft('a', 'critical', 'second'));
    set.add(draft('a', 'warning', 'third'));
    expect(set.size).toBe(2);
    expect(set.values().map((d) => [d.anchor, d.severity, d.summary])).toEqual([
      ['a', 'critical', 'third'],
      ['b', 'info', 'other'],
    ]);
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

  it('puts compactions before the calls at or after them, trailing ones last, in input order among equals', () => {
    const [call1, call2] = buildItems([{ span: 'x' }, { span: 'y' }]).map((i) => {
      if (i.type !== 'call') throw new Error('call expected');
      return i.call;
    });
    const base = buildItems([{ compaction: {} }])[0];
    if (!call1 || !call2 || base?.type !== 'compaction') throw new Error('fixture');
    const at = (atNs: string, sourceKey: string) => ({ ...base.compaction, atNs, sourceKey });
    const timeline = buildTimeline(
      [
        { ...call2, startNs: '200' },
        { ...call1, startNs: '100' },
      ],
      [
        at('300', 'late'),
        at('150', 'mid-2'),
        at('50', 'early'),
        at('150', 'mid-1'),
        at('100', 'same'),
      ],
    );
    expect(
      timeline.map((i) => (i.type === 'call' ? i.call.spanId : i.compaction.sourceKey)),
    ).toEqual(['early', 'same', 'x', 'mid-2', 'mid-1', 'y', 'late']);
  });
});
