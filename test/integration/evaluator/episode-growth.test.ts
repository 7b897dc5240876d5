/**
 * A takeover finding follows its episode as it grows (issue 36 §5): the evaluator's later
 * evaluations of the same session update the one finding (calls, peak share, the most tokens
 * held) instead of leaving it at the first three calls; it is never retracted, and a webhook on
 * loopback gets it once: an update at the same severity is not sent again. The real detectors,
 * evaluator, outbox and notifier, on the test database (PGlite, or PostgreSQL with DATABASE_URL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWebhookSecret } from '../../../src/notifier/config.ts';
import { startNotifier } from '../../../src/notifier/notifier.ts';
import type { InputParts } from '../../../src/model/calls.ts';
import { DEFAULT_THRESHOLDS } from '../../../src/model/thresholds.ts';
import { setAlertChannels } from '../../../src/store/alert-channels.ts';
import { putAlertSettings } from '../../../src/store/alerts.ts';
import { startHttpReceiver, type HttpReceiver } from '../../helpers/http-receiver.ts';
import { createTestStore, type TestStore } from '../../helpers/store.ts';
import { addChannel, eventually, FAST, memoryLogger, testConfig } from '../notifier/fixtures.ts';
import { call, ingest, testEvaluator } from './helpers.ts';

let store: TestStore;
let receiver: HttpReceiver;
beforeAll(async () => {
  store = await createTestStore();
  receiver = await startHttpReceiver();
}, 180_000);
afterAll(async () => {
  await receiver?.close();
  await store?.close();
});

/** Claude Code's shape: each call reports the Read results new since the stream's last call. */
const readCall = (second: number, context: number, newRead: number) =>
  call('growing', second, {
    contextTokens: context,
    contextWindow: 1_000_000, // far from full: only the takeover speaks
    parts: {
      unit: 'tokens',
      total: null,
      system: null,
      tools: newRead > 0 ? { Read: newRead } : {},
      source: 'tool_spans',
      estimatedFrom: 'bytes',
    } satisfies InputParts,
  });

async function evaluate(): Promise<void> {
  const evaluator = testEvaluator(store);
  await evaluator.runOnce();
  await evaluator.stop();
}

async function takeovers() {
  return store.db
    .selectFrom('findings')
    .select(['id', 'severity', 'summary', 'details', 'span_id'])
    .where('detector', '=', 'tool_takeover')
    .execute();
}

/** Deliveries not yet delivered or given up: what the outbox still has to send. */
async function pending(): Promise<number> {
  const rows = await store.db
    .selectFrom('deliveries')
    .select('status')
    .where('status', 'not in', ['delivered', 'failed'])
    .execute();
  return rows.length;
}

describe('a takeover finding that follows its episode', () => {
  it('grows with the episode, stays one finding, and is sent once', async () => {
    await putAlertSettings(store.db, 'default', {
      enabled: true,
      thresholds: { ...DEFAULT_THRESHOLDS },
      windowOverrides: [],
    });
    const channel = await addChannel(store.db, {
      type: 'webhook',
      url: `${receiver.url}/hook`,
      secret: generateWebhookSecret(),
      headers: {},
    });
    const attached = await setAlertChannels(store.db, 'default', [
      { id: channel, minSeverity: 'info' },
    ]);
    expect(attached.ok).toBe(true);
    const notifier = startNotifier({
      store,
      config: testConfig(),
      log: memoryLogger(),
      ...FAST,
    });
    try {
      // Reads of 20k, 15k, 20k tokens into a 50k → 90k input: 40%, 55%, 61% held; it fires.
      await ingest(store.db, [
        readCall(1, 50_000, 20_000),
        readCall(2, 70_000, 15_000),
        readCall(3, 90_000, 20_000),
      ]);
      await evaluate();
      const [first, ...others] = await takeovers();
      expect(others).toEqual([]);
      expect(first!.details).toMatchObject({ peakTokens: 55_000, callCount: 3 });
      expect(first!.summary).toContain('took 40%, 50%, 61% of the input over 3 calls');
      expect(first!.summary).toContain('(55,000 tokens at peak, estimated from result bytes)');
      await eventually(async () => ((await pending()) === 0 ? true : undefined));
      expect(receiver.requests).toHaveLength(1);

      // The session goes on: 36k more of Read in a 130k input, then a call with no new results.
      await ingest(store.db, [readCall(4, 130_000, 36_000), readCall(5, 140_000, 0)]);
      await evaluate();
      const after = await takeovers();
      expect(after).toHaveLength(1);
      expect(after[0]!.id).toBe(first!.id); // the same finding, updated in place
      expect(after[0]!.span_id).toBe(first!.span_id);
      expect(after[0]!.severity).toBe('warning');
      expect(after[0]!.details).toMatchObject({
        peakTokens: 91_000,
        peakShare: 0.7,
        callCount: 5,
        lastCall: { spanId: 'growing-000005', tokens: 91_000 },
      });
      expect(after[0]!.summary).toContain(
        'took 40%, 50%, 61%, then up to 70% of the input over 5 calls (91,000 tokens at peak',
      );
      // Not sent again: the outbox has nothing pending and the receiver still has one request.
      await eventually(async () => ((await pending()) === 0 ? true : undefined));
      const deliveries = await store.db.selectFrom('deliveries').select('finding_id').execute();
      expect(deliveries.map((d) => String(d.finding_id))).toEqual([String(first!.id)]);
      expect(receiver.requests).toHaveLength(1);
    } finally {
      await notifier.stop();
    }
  });
});
