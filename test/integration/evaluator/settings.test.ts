/** The Context rot alert's knobs as the evaluator applies them, with the real detectors. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { putAlertSettings } from '../../../src/store/alerts.ts';
import { DEFAULT_THRESHOLDS } from '../../../src/model/findings.ts';
import { createTestStore, type TestStore } from '../../helpers/store.ts';
import { call, findingKeys, ingest, testEvaluator } from './helpers.ts';

let store: TestStore;
beforeAll(async () => {
  store = await createTestStore();
});
afterAll(async () => {
  await store?.close();
});
beforeEach(async () => {
  await store.db.deleteFrom('findings').execute();
  await store.db.deleteFrom('conversations').execute();
  await store.db.deleteFrom('llm_calls').execute();
  await store.db.deleteFrom('alert_settings').execute();
});

async function evaluate(): Promise<number> {
  const evaluator = testEvaluator(store); // the four detectors of src/detectors
  const n = await evaluator.runOnce();
  await evaluator.stop();
  return n;
}

const cutOff = {
  finishReasonRaw: 'length',
  finishClass: 'output_limit' as const,
  outputTokens: 4096,
};

describe('alert settings in the evaluator', () => {
  it('writes no findings while the alert is disabled, but advances past the calls', async () => {
    await putAlertSettings(store.db, 'default', {
      enabled: false,
      thresholds: { ...DEFAULT_THRESHOLDS },
      windowOverrides: [],
    });
    await ingest(store.db, [call('a', 1, cutOff), call('a', 2, { contextTokens: 190_000 })]);
    expect(await evaluate()).toBe(1);
    expect(await findingKeys(store.db)).toEqual([]);
    expect(await store.db.selectFrom('deliveries').selectAll().execute()).toEqual([]);
    const row = await store.db.selectFrom('conversations').selectAll().executeTakeFirstOrThrow();
    expect(row).toMatchObject({ dirty: false, evaluated_span_id: 'a-000002' });

    // Enabled again: only what arrives from now on is reported.
    await putAlertSettings(store.db, 'default', {
      enabled: true,
      thresholds: { ...DEFAULT_THRESHOLDS },
      windowOverrides: [],
    });
    await ingest(store.db, [call('a', 3, { ...cutOff, contextTokens: 190_000 })]);
    expect(await evaluate()).toBe(1);
    expect(await findingKeys(store.db)).toEqual(['output_cut_off trace-a:a-000003 warning']);
  });

  it('uses a changed threshold', async () => {
    // 120,000 of 200,000 tokens is 60%: below the default 70%.
    await ingest(store.db, [call('b', 1, { contextTokens: 120_000 })]);
    await evaluate();
    expect(await findingKeys(store.db)).toEqual([]);

    await putAlertSettings(store.db, 'default', {
      enabled: true,
      thresholds: { ...DEFAULT_THRESHOLDS, usageThreshold: 0.5 },
      windowOverrides: [],
    });
    await ingest(store.db, [call('c', 1, { contextTokens: 120_000, runId: 'run-c' })]);
    await evaluate();
    const findings = await store.db.selectFrom('findings').selectAll().execute();
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({
      detector: 'context_too_full',
      severity: 'warning',
      run_id: 'run-c',
    });
  });

  it('applies a window override to the calls it evaluates', async () => {
    await putAlertSettings(store.db, 'default', {
      enabled: true,
      thresholds: { ...DEFAULT_THRESHOLDS },
      windowOverrides: [{ model: 'CLAUDE-*', window: 120_000 }],
    });
    // 100,000 tokens: 50% of the catalog's 200,000, 83% of the override's 120,000.
    await ingest(store.db, [call('d', 1, { contextTokens: 100_000 })]);
    await evaluate();
    const findings = await store.db.selectFrom('findings').selectAll().execute();
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ detector: 'context_too_full', severity: 'warning' });
    expect(JSON.stringify(findings[0]?.details)).toContain('"window":120000');
    expect(JSON.stringify(findings[0]?.details)).toContain('"override"');
  });
});
