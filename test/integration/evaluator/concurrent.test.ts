/**
 * Several evaluators on two connection pools to one PostgreSQL database, evaluating many
 * conversations while new and late calls keep arriving: every expected finding exists once,
 * and each delivery is queued once. PGlite is a single process: skipped there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Detector } from '../../../src/detectors/types.ts';
import type { Evaluator } from '../../../src/evaluator/loop.ts';
import type { FindingDraft } from '../../../src/model/findings.ts';
import { openStore, type Store } from '../../../src/store/db.ts';
import { createTestStore, usingPostgres, type TestStore } from '../../helpers/store.ts';
import { call, dropDetector, findingKeys, fullDetector, ingest, testEvaluator } from './helpers.ts';

const CONVERSATIONS = 60;

/**
 * One finding per conversation (anchor `cut:<conversation>`): warning after a cut-off call,
 * escalated to critical after a cut-off tool call.
 */
const cutDetector: Detector<{ severity: 'warning' | 'critical' | null }> = {
  id: 'output_cut_off',
  initial: () => ({ severity: null }),
  step(state, item) {
    if (item.type !== 'call' || item.call.finishClass !== 'output_limit')
      return { state, findings: [] };
    const severity =
      item.call.outputToolCall || state.severity === 'critical' ? 'critical' : 'warning';
    if (severity === state.severity) return { state, findings: [] };
    const c = item.call;
    const draft: FindingDraft = {
      detector: 'output_cut_off',
      anchor: `cut:${c.conversationId}`,
      severity,
      kind: null,
      conversationId: c.conversationId,
      streamKey: c.streamKey,
      runId: c.runId,
      traceId: c.traceId,
      spanId: c.spanId,
      model: c.responseModel,
      summary: `cut off (${severity})`,
      details: {},
    };
    return { state: { severity }, findings: [draft] };
  },
};

/** Every conversation reports the same anchor: concurrent inserts of one finding. */
const sharedDetector: Detector<null> = {
  id: 'tool_takeover',
  initial: () => null,
  step(state, item) {
    if (item.type !== 'call' || item.call.contextTokens !== 180_000) return { state, findings: [] };
    const c = item.call;
    return {
      state,
      findings: [
        {
          detector: 'tool_takeover',
          anchor: 'shared',
          severity: 'warning',
          kind: null,
          conversationId: c.conversationId,
          streamKey: c.streamKey,
          runId: c.runId,
          traceId: c.traceId,
          spanId: c.spanId,
          model: null,
          summary: 'shared',
          details: {},
        },
      ],
    };
  },
};

const detectors = [dropDetector, fullDetector, cutDetector, sharedDetector] as Detector[];
const convs = Array.from({ length: CONVERSATIONS }, (_, i) => `conv${String(i).padStart(3, '0')}`);

describe.skipIf(!usingPostgres)('concurrent evaluators on one PostgreSQL', () => {
  let store: TestStore;
  let other: Store;
  beforeAll(async () => {
    store = await createTestStore();
    other = await openStore({ databaseUrl: store.url, dataDir: 'memory://' });
    const channel = await store.db
      .insertInto('channels')
      .values({
        workspace_id: 'default',
        type: 'webhook',
        name: 'hook',
        config: '{}',
        secrets: '{}',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await store.db
      .insertInto('alert_channels')
      .values({ workspace_id: 'default', channel_id: channel.id, min_severity: 'info' })
      .execute();
  });
  afterAll(async () => {
    await other?.close();
    await store?.close();
  });

  async function dirtyLeft(): Promise<number> {
    const row = await store.db
      .selectFrom('conversations')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('dirty', '=', true)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Runs every evaluator in a loop until `done()` and no conversation is dirty. */
  async function drain(evaluators: Evaluator[], done: () => boolean): Promise<void> {
    const deadline = Date.now() + 20_000;
    await Promise.all(
      evaluators.map(async (evaluator) => {
        for (;;) {
          await evaluator.runOnce();
          if (done() && (await dirtyLeft()) === 0) return;
          if (Date.now() > deadline) throw new Error('evaluation did not settle');
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }),
    );
  }

  it('creates every expected finding exactly once and queues each delivery once', async () => {
    const counts = [0, 0, 0, 0];
    const errors: unknown[] = [];
    const log = {
      info() {},
      warn: (o: object) => errors.push(o),
      error: (o: object) => errors.push(o),
    };
    const evaluators = [store, store, other, other].map((s, i) =>
      testEvaluator(s, { detectors, log, onEvaluated: () => (counts[i] = (counts[i] ?? 0) + 1) }),
    );

    // Wave 1, evaluated while it is being ingested: a drop at 2 s, a cut-off (warning) at 2 s.
    let ingested = false;
    const wave1 = (async () => {
      for (const conv of convs) {
        await ingest(store.db, [
          call(conv, 1, { contextTokens: 10_000 }),
          call(conv, 2, { contextTokens: 1_000, finishClass: 'output_limit' }),
        ]);
      }
      ingested = true;
    })();
    await drain(evaluators, () => ingested);
    await wave1;

    // Wave 2 from two ingesting pools: a full context (critical) and a cut-off tool call
    // (escalation) at 3 s for all; a late call at 1.5 s (a new drop) for every other one.
    ingested = false;
    const wave2 = (async () => {
      await Promise.all(
        [store, other].map(async (s, half) => {
          for (const conv of convs.filter((_, i) => i % 2 === half)) {
            await ingest(s.db, [
              call(conv, 3, {
                contextTokens: 180_000,
                finishClass: 'output_limit',
                outputToolCall: true,
              }),
            ]);
            if (half === 0) await ingest(s.db, [call(conv, 1.5, { contextTokens: 5_000 })]);
          }
        }),
      );
      ingested = true;
    })();
    await drain(evaluators, () => ingested);
    await wave2;
    await Promise.all(evaluators.map((e) => e.stop()));

    const expected = convs
      .flatMap((conv, i) => [
        `history_lost trace-${conv}:${conv}-000002 warning`,
        `context_too_full trace-${conv}:${conv}-000003 critical`,
        `output_cut_off cut:${conv} critical`,
        ...(i % 2 === 0 ? [`history_lost trace-${conv}:${conv}-0001.5 warning`] : []),
      ])
      .concat('tool_takeover shared warning')
      .sort();
    expect(await findingKeys(store.db)).toEqual(expected);

    const deliveries = await store.db
      .selectFrom('deliveries')
      .innerJoin('findings', 'findings.id', 'deliveries.finding_id')
      .select(['findings.detector', 'findings.anchor', 'deliveries.event'])
      .execute();
    const created = deliveries.filter((d) => d.event === 'created');
    const escalated = deliveries.filter((d) => d.event === 'escalated');
    expect(created).toHaveLength(expected.length);
    expect(new Set(created.map((d) => `${d.detector} ${d.anchor}`)).size).toBe(expected.length);
    expect(escalated.map((d) => d.anchor).sort()).toEqual(convs.map((c) => `cut:${c}`));

    // Both pools did part of the work, and nothing failed (no deadlock, no unique violation).
    expect(errors).toEqual([]);
    expect((counts[0] ?? 0) + (counts[1] ?? 0)).toBeGreaterThan(0);
    expect((counts[2] ?? 0) + (counts[3] ?? 0)).toBeGreaterThan(0);
  });
});
