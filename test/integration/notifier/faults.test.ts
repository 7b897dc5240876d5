import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateWebhookSecret } from '../../../src/notifier/config.ts';
import { startNotifier } from '../../../src/notifier/notifier.ts';
import { checkHostname, postJson, type Resolver } from '../../../src/notifier/outbound.ts';
import { openStore, type Store } from '../../../src/store/db.ts';
import { claimDueDeliveries } from '../../../src/store/deliveries.ts';
import { ManualTimers, TestClock } from '../../helpers/clock.ts';
import { startHttpReceiver, type HttpReceiver, type Reply } from '../../helpers/http-receiver.ts';
import { createTestStore, usingPostgres, type TestStore } from '../../helpers/store.ts';
import {
  addChannel,
  deliveriesOf,
  eventually,
  FAST,
  memoryLogger,
  pollCounter,
  queueFinding,
  testConfig,
} from './fixtures.ts';

describe('delivery faults', () => {
  let store: TestStore;
  const receivers: HttpReceiver[] = [];

  async function receiver(reply: (index: number) => Reply): Promise<HttpReceiver> {
    const started = await startHttpReceiver((_request, index) => reply(index));
    receivers.push(started);
    return started;
  }

  async function webhook(url: string): Promise<string> {
    return addChannel(store.db, {
      type: 'webhook',
      url,
      secret: generateWebhookSecret(),
      headers: {},
    });
  }

  async function settled(findingId: string, status: string, timeoutMs = 10_000) {
    return eventually(async () => {
      const [delivery] = await deliveriesOf(store.db, findingId);
      return delivery?.status === status ? delivery : undefined;
    }, timeoutMs);
  }

  beforeAll(async () => {
    store = await createTestStore();
  }, 180_000);
  // Each test starts with an empty queue: leftovers of earlier tests are settled.
  afterEach(async () => {
    await store.db
      .updateTable('deliveries')
      .set({ status: 'failed' })
      .where('status', '=', 'pending')
      .execute();
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await store.close();
  });

  it('retries 500s and delivers once, with every attempt logged under the same id', async () => {
    const endpoint = await receiver((index) =>
      index < 2 ? { status: 500, body: 'boom' } : { status: 200 },
    );
    const findingId = await queueFinding(store.db, [await webhook(endpoint.url)]);
    const outcomes: string[] = [];
    const polls = pollCounter();
    const notifier = startNotifier({
      store,
      config: testConfig(),
      log: memoryLogger(),
      ...FAST,
      onPoll: polls.onPoll,
      onAttempt: ({ outcome, channelType }) => outcomes.push(`${channelType}:${outcome}`),
    });
    try {
      const delivery = await settled(findingId, 'delivered');
      await polls.after(2); // nothing sent after the delivery
      expect(outcomes).toEqual(['webhook:retry', 'webhook:retry', 'webhook:delivered']);
      expect(endpoint.requests).toHaveLength(3);
      expect(new Set(endpoint.requests.map((r) => r.headers['webhook-id']))).toEqual(
        new Set([delivery.id]),
      );
      expect(delivery.attempts).toBe(3);
      expect(delivery.attemptLog.map((a) => [a.status_code, a.outcome])).toEqual([
        [500, 'retry'],
        [500, 'retry'],
        [200, 'delivered'],
      ]);
      expect(delivery.attemptLog[0]?.error).toBe('HTTP 500: boom');
      for (const attempt of delivery.attemptLog)
        expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);
    } finally {
      await notifier.stop();
    }
  });

  it('waits at least Retry-After before retrying a 429', async () => {
    const endpoint = await receiver((index) =>
      index === 0 ? { status: 429, headers: { 'retry-after': '2' } } : { status: 200 },
    );
    const findingId = await queueFinding(store.db, [await webhook(endpoint.url)]);
    // the wait is judged by the notifier's clock, moved on by the test: nothing sleeps 2 s
    const clock = new TestClock();
    const polls = pollCounter();
    const notifier = startNotifier({
      store,
      config: testConfig(),
      log: memoryLogger(),
      ...FAST,
      clock,
      onPoll: polls.onPoll,
    });
    try {
      const waiting = await eventually(async () => {
        const [delivery] = await deliveriesOf(store.db, findingId);
        return delivery?.attemptLog.length === 1 ? delivery : undefined;
      });
      const [attempt] = waiting.attemptLog;
      expect(attempt!.outcome).toBe('retry');
      // due no sooner than Retry-After asks (backoff alone would retry after 25..50 ms)
      const dueAfterMs =
        new Date(waiting.next_attempt_at).getTime() - new Date(attempt!.at).getTime();
      expect(dueAfterMs).toBeGreaterThanOrEqual(2_000);
      expect(dueAfterMs).toBeLessThan(6_000);
      // looks for due deliveries before Retry-After has passed take nothing
      await polls.after(3);
      expect(endpoint.requests).toHaveLength(1);

      clock.advance(2_000);
      await settled(findingId, 'delivered');
      expect(endpoint.requests).toHaveLength(2);
    } finally {
      await notifier.stop();
    }
  });

  it('tries a 400 once and marks the delivery failed', async () => {
    const endpoint = await receiver(() => ({ status: 400, body: 'bad payload' }));
    const findingId = await queueFinding(store.db, [await webhook(endpoint.url)]);
    const polls = pollCounter();
    const notifier = startNotifier({
      store,
      config: testConfig(),
      log: memoryLogger(),
      ...FAST,
      onPoll: polls.onPoll,
    });
    try {
      const delivery = await settled(findingId, 'failed');
      await polls.after(3); // not tried again
      expect(endpoint.requests).toHaveLength(1);
      expect(delivery.last_error).toBe('HTTP 400: bad payload');
      expect(delivery.attemptLog.map((a) => [a.status_code, a.outcome])).toEqual([[400, 'failed']]);
    } finally {
      await notifier.stop();
    }
  });

  it('times out a hanging endpoint without delaying other channels', async () => {
    const hanging = await receiver(() => 'hang');
    const healthy = await receiver(() => ({ status: 200 }));
    const hangingChannel = await webhook(hanging.url);
    const healthyChannel = await webhook(healthy.url);
    // Several findings for the hanging channel queued first, then one for the healthy one.
    const stuck: string[] = [];
    for (let i = 0; i < 6; i++) stuck.push(await queueFinding(store.db, [hangingChannel]));
    const fine = await queueFinding(store.db, [healthyChannel]);
    const config = testConfig({ deliveryTimeoutMs: 4_000 });
    // the 4 s deadline and the send's duration are judged by timers the test moves on: nothing
    // waits 4 s, and no busy machine reaches the deadline early
    const timers = new ManualTimers();
    const notifier = startNotifier({
      store,
      config,
      log: memoryLogger(),
      ...FAST,
      concurrency: 4,
      timers,
      // the sends still hanging at the end are aborted at once
      stopTimeoutMs: 0,
    });
    try {
      await settled(fine, 'delivered');
      // two sends to the hanging channel (two a channel) wait for their deadline
      await hanging.waitFor(2);
      await timers.waitForPending(2);
      // Delivered while the hanging sends were still waiting for their timeout.
      for (const findingId of stuck) {
        const [delivery] = await deliveriesOf(store.db, findingId);
        expect(delivery?.attemptLog).toEqual([]);
      }
      // not a millisecond early: the deadlines fire (synchronously) at 4 s, not before
      timers.advance(3_999);
      expect(timers.pending).toBe(2);
      timers.advance(1);
      expect(timers.pending).toBe(0);
      // The hanging ones time out and are kept for a retry.
      const timedOut = await eventually(async () => {
        const [delivery] = await deliveriesOf(store.db, stuck[0]!);
        return delivery?.attemptLog[0];
      }, 15_000);
      expect(timedOut.outcome).toBe('retry');
      expect(timedOut.error).toMatch(/timed out/);
      expect(timedOut.status_code).toBeNull();
      expect(timedOut.duration_ms).toBeGreaterThanOrEqual(3_900);
      expect(timedOut.duration_ms).toBeLessThan(8_000);
    } finally {
      await notifier.stop();
    }
  });

  it('does not follow a redirect', async () => {
    const target = await receiver(() => ({ status: 200 }));
    const redirecting = await receiver(() => ({
      status: 302,
      headers: { location: `${target.url}/elsewhere` },
    }));
    const findingId = await queueFinding(store.db, [await webhook(redirecting.url)]);
    const polls = pollCounter();
    const notifier = startNotifier({
      store,
      config: testConfig(),
      log: memoryLogger(),
      ...FAST,
      onPoll: polls.onPoll,
    });
    try {
      const delivery = await settled(findingId, 'failed');
      await polls.after(2); // not tried again
      expect(redirecting.requests).toHaveLength(1);
      expect(target.requests).toHaveLength(0);
      expect(delivery.last_error).toBe(
        `redirect not followed (HTTP 302 to ${target.url}/elsewhere)`,
      );
    } finally {
      await notifier.stop();
    }
  });

  it('refuses link-local and metadata destinations unless private addresses are allowed', async () => {
    const metadata = await webhook('http://169.254.169.254/latest/meta-data/');
    const findingId = await queueFinding(store.db, [metadata]);
    const notifier = startNotifier({
      store,
      config: testConfig({ allowPrivateAddresses: false }),
      log: memoryLogger(),
      ...FAST,
    });
    try {
      const delivery = await settled(findingId, 'failed');
      expect(delivery.last_error).toMatch(/^refused: address 169\.254\.169\.254 is private/);
      // The attempt log says how to allow it.
      expect(delivery.last_error).toContain('ROTSCOPE_ALLOW_PRIVATE_ADDRESSES=true');
      expect(delivery.attemptLog).toHaveLength(1);
    } finally {
      await notifier.stop();
    }
    // Loopback receivers are refused too when not allowed, in every spelling.
    const local = await receiver(() => ({ status: 200 }));
    const port = new URL(local.url).port;
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', '[::7f00:1]', '[2002:7f00:1::1]']) {
      expect(await postJson(`http://${host}:${port}/`, { body: '{}' }), host).toMatchObject({
        kind: 'blocked',
      });
    }
    expect((await postJson(`http://metadata.google.internal/`, { body: '{}' })).kind).toBe(
      'blocked',
    );
    expect(local.requests).toHaveLength(0);
    // Allowed, a literal link-local address passes the check (not dialled here: tests stay on
    // loopback; the next test shows allowed destinations being reached).
    expect(checkHostname('169.254.169.254', true)).toBeUndefined();
  });

  it('judges the addresses a name resolves to, at connect time, with the resolver given', async () => {
    const local = await receiver(() => ({ status: 200 }));
    const port = new URL(local.url).port;
    const asked: string[] = [];
    const answers: Record<string, string[]> = {
      'hooks.internal.test': ['127.0.0.1'],
      'mixed.test': ['93.184.215.14', '10.0.0.7'],
      'nat64.test': ['64:ff9b::a9fe:a9fe'],
    };
    const resolve: Resolver = async (name) => {
      asked.push(name);
      const addresses = answers[name];
      if (!addresses) throw Object.assign(new Error(`${name} not found`), { code: 'ENOTFOUND' });
      return addresses.map((address) => ({ address, family: net.isIP(address) }));
    };
    // A name that passes the name check is refused by the address it resolves to.
    expect(await postJson(`http://hooks.internal.test:${port}/`, { body: '{}', resolve })).toEqual({
      kind: 'blocked',
      error: expect.stringMatching(/^hooks\.internal\.test: address 127\.0\.0\.1 is private/),
    });
    // One refused address among several refuses the name: none of them is dialled.
    expect(await postJson(`http://mixed.test:${port}/`, { body: '{}', resolve })).toMatchObject({
      kind: 'blocked',
      error: expect.stringContaining('address 10.0.0.7'),
    });
    expect(await postJson(`http://nat64.test:${port}/`, { body: '{}', resolve })).toMatchObject({
      kind: 'blocked',
    });
    // A name that does not resolve is a network error (retried), not a refusal.
    expect(await postJson(`http://gone.test:${port}/`, { body: '{}', resolve })).toEqual({
      kind: 'network',
      error: 'ENOTFOUND: gone.test not found',
    });
    expect(local.requests).toHaveLength(0);
    // Allowed, the name reaches the (loopback) receiver it resolves to.
    expect(
      await postJson(`http://hooks.internal.test:${port}/`, {
        body: '{}',
        resolve,
        allowPrivate: true,
      }),
    ).toMatchObject({ kind: 'response', status: 200 });
    expect(local.requests).toHaveLength(1);
    expect(asked).toEqual([
      'hooks.internal.test',
      'mixed.test',
      'nat64.test',
      'gone.test',
      'hooks.internal.test',
    ]);
  });

  it('reads response bodies only up to the cap', async () => {
    const big = await receiver(() => ({ status: 500, body: 'x'.repeat(2 * 1024 * 1024) }));
    const outcome = await postJson(big.url, {
      body: '{}',
      allowPrivate: true,
      maxResponseBytes: 1024,
    });
    expect(outcome).toMatchObject({ kind: 'response', status: 500, truncated: true });
    expect(outcome.kind === 'response' && outcome.body.length).toBe(1024);
    const small = await postJson(big.url, { body: '{}', allowPrivate: true });
    expect(small.kind === 'response' && small.body.length).toBe(64 * 1024);
  });

  it('marks a delivery dead once retrying would pass the give-up time', async () => {
    const endpoint = await receiver(() => ({ status: 503 }));
    const findingId = await queueFinding(store.db, [await webhook(endpoint.url)]);
    // an hour to give up, moved on by the clock: no test waits an hour, and no busy machine
    // reaches it early
    const clock = new TestClock();
    const polls = pollCounter();
    const notifier = startNotifier({
      store,
      config: testConfig({ deliveryGiveUpMs: 3_600_000 }),
      log: memoryLogger(),
      ...FAST,
      clock,
      onPoll: polls.onPoll,
    });
    try {
      await eventually(async () => (endpoint.requests.length >= 2 ? true : undefined), 30_000);
      const [retrying] = await deliveriesOf(store.db, findingId);
      expect(retrying?.status).toBe('pending');
      clock.advance(3_600_000);
      const delivery = await settled(findingId, 'dead', 30_000);
      expect(delivery.attemptLog.length).toBeGreaterThanOrEqual(3);
      expect(delivery.attemptLog.at(-1)?.outcome).toBe('dead');
      expect(delivery.last_error).toMatch(/^gave up after \d+ attempts: HTTP 503/);
      const count = endpoint.requests.length;
      await polls.after(3); // a dead delivery is not tried again
      expect(endpoint.requests).toHaveLength(count);
    } finally {
      await notifier.stop();
    }
  });

  it('sends a delivery left behind by a crashed notifier after its lease, with the same id', async () => {
    const endpoint = await receiver(() => ({ status: 200 }));
    const findingId = await queueFinding(store.db, [await webhook(endpoint.url)]);
    // A notifier claims the row for an hour and dies before sending.
    const claimed = await claimDueDeliveries(store.db, { limit: 10, leaseMs: 3_600_000 });
    expect(claimed.map((c) => c.findingId)).toContain(findingId);
    const clock = new TestClock();
    const polls = pollCounter();
    const notifier = startNotifier({
      store,
      config: testConfig(),
      log: memoryLogger(),
      ...FAST,
      clock,
      onPoll: polls.onPoll,
    });
    try {
      // polls within the lease take nothing
      await polls.after(3);
      expect(endpoint.requests).toHaveLength(0);
      clock.advance(3_600_000);
      const delivery = await settled(findingId, 'delivered', 30_000);
      expect(endpoint.requests).toHaveLength(1);
      expect(endpoint.requests[0]?.headers['webhook-id']).toBe(delivery.id);
      expect(delivery.attempts).toBe(2);
    } finally {
      await notifier.stop();
    }
  });

  it('stop() waits for sends in flight', async () => {
    const slow = await startHttpReceiver(() => ({ status: 200 }));
    receivers.push(slow);
    const findingId = await queueFinding(store.db, [await webhook(slow.url)]);
    const delayed = await receiver(() => 'hang');
    const hangingFinding = await queueFinding(store.db, [await webhook(delayed.url)]);
    const notifier = startNotifier({
      store,
      config: testConfig({ deliveryTimeoutMs: 5_000 }),
      log: memoryLogger(),
      ...FAST,
      stopTimeoutMs: 300,
    });
    await delayed.waitFor(1);
    await settled(findingId, 'delivered');
    const stopping = Date.now();
    await notifier.stop();
    await notifier.stop();
    expect(Date.now() - stopping).toBeLessThan(2_000);
    // The aborted send was recorded as retryable, not lost.
    const [delivery] = await deliveriesOf(store.db, hangingFinding);
    expect(delivery?.status).toBe('pending');
    expect(delivery?.attemptLog.map((a) => [a.outcome, a.error])).toEqual([
      ['retry', 'aborted: notifier stopping'],
    ]);
  });

  it('two notifiers on one database never send a delivery twice', async () => {
    const endpoints = await Promise.all([0, 1, 2].map(() => receiver(() => ({ status: 200 }))));
    const channels = await Promise.all(endpoints.map((e) => webhook(e.url)));
    const findings: string[] = [];
    for (let i = 0; i < 12; i++) findings.push(await queueFinding(store.db, channels));
    // Two Kysely instances (two pools) on the same Postgres database; on PGlite one database.
    const second: Store = usingPostgres
      ? await openStore({ databaseUrl: store.url, dataDir: 'memory://' })
      : store;
    const [pollsA, pollsB] = [pollCounter(), pollCounter()];
    const a = startNotifier({
      store,
      config: testConfig(),
      log: memoryLogger(),
      ...FAST,
      pollMs: 5,
      onPoll: pollsA.onPoll,
    });
    const b = startNotifier({
      store: second,
      config: testConfig(),
      log: memoryLogger(),
      ...FAST,
      pollMs: 5,
      onPoll: pollsB.onPoll,
    });
    try {
      await eventually(async () => {
        const rows = await store.db
          .selectFrom('deliveries')
          .select('id')
          .where('finding_id', 'in', findings)
          .where('status', '=', 'delivered')
          .execute();
        return rows.length === 36;
      }, 15_000);
      // neither sends anything more
      await Promise.all([pollsA.after(2), pollsB.after(2)]);
      const ids = endpoints.flatMap((e) => e.requests.map((r) => String(r.headers['webhook-id'])));
      expect(ids).toHaveLength(36);
      expect(new Set(ids).size).toBe(36);
      const attempts = await store.db
        .selectFrom('delivery_attempts')
        .innerJoin('deliveries', 'deliveries.id', 'delivery_attempts.delivery_id')
        .select('delivery_attempts.id')
        .where('deliveries.finding_id', 'in', findings)
        .execute();
      expect(attempts).toHaveLength(36);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      if (second !== store) await second.close();
    }
  });
});
