import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWebhookSecret } from '../../../src/notifier/config.ts';
import { startNotifier } from '../../../src/notifier/notifier.ts';
import { startHttpReceiver, type HttpReceiver } from '../../helpers/http-receiver.ts';
import { createTestStore, usingPostgres, type TestStore } from '../../helpers/store.ts';
import {
  addChannel,
  deliveriesOf,
  eventually,
  FAST,
  memoryLogger,
  queueFinding,
  testConfig,
} from './fixtures.ts';

const CHILD = fileURLToPath(new URL('./notifier-child.ts', import.meta.url));

describe('a notifier killed mid-send', () => {
  let store: TestStore;
  let endpoint: HttpReceiver;

  beforeAll(async () => {
    store = await createTestStore();
    // The first request never gets an answer (the sender is killed meanwhile); later ones do.
    endpoint = await startHttpReceiver((_request, index) =>
      index === 0 ? 'hang' : { status: 200 },
    );
  }, 180_000);
  afterAll(async () => {
    await endpoint.close();
    await store.close();
  });

  // Needs a database two processes can share: Postgres only (PGlite is in-process).
  it.skipIf(!usingPostgres)(
    'leaves the delivery to be made after restart, with the same id',
    async () => {
      const channelId = await addChannel(store.db, {
        type: 'webhook',
        url: endpoint.url,
        secret: generateWebhookSecret(),
        headers: {},
      });
      const findingId = await queueFinding(store.db, [channelId]);
      const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
        env: { ...process.env, DATABASE_URL: store.url, LEASE_MS: '1500' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise((resolve) => child.on('exit', resolve));
      try {
        await endpoint.waitFor(1, 30_000);
      } catch (error) {
        child.kill('SIGKILL');
        throw new Error(`child never sent: ${output}`, { cause: error });
      }
      child.kill('SIGKILL');
      await exited;

      const [orphan] = await deliveriesOf(store.db, findingId);
      expect(orphan).toMatchObject({ status: 'pending', attempts: 1 });
      expect(orphan?.attemptLog).toEqual([]);

      const notifier = startNotifier({ store, config: testConfig(), log: memoryLogger(), ...FAST });
      try {
        const delivery = await eventually(async () => {
          const [row] = await deliveriesOf(store.db, findingId);
          return row?.status === 'delivered' ? row : undefined;
        });
        expect(endpoint.requests).toHaveLength(2);
        expect(endpoint.requests.map((r) => r.headers['webhook-id'])).toEqual([
          delivery.id,
          delivery.id,
        ]);
        // not sent again before the killed notifier's lease ran out (the claim moved
        // next_attempt_at past it): compared with the lease itself, not with when the first
        // request arrived, which a loaded machine delays by hundreds of milliseconds
        expect(endpoint.requests[1]!.at).toBeGreaterThanOrEqual(
          new Date(orphan!.next_attempt_at).getTime() - 5,
        );
        expect(delivery.attemptLog.map((a) => a.outcome)).toEqual(['delivered']);
      } finally {
        await notifier.stop();
      }
    },
  );

  it('sends what was queued while no notifier ran', async () => {
    const second = await startHttpReceiver();
    try {
      const channelId = await addChannel(store.db, {
        type: 'webhook',
        url: second.url,
        secret: generateWebhookSecret(),
        headers: {},
      });
      const findingId = await queueFinding(store.db, [channelId]);
      const notifier = startNotifier({ store, config: testConfig(), log: memoryLogger(), ...FAST });
      try {
        const [request] = await second.waitFor(1);
        const [delivery] = await deliveriesOf(store.db, findingId);
        expect(request?.headers['webhook-id']).toBe(delivery?.id);
      } finally {
        await notifier.stop();
      }
    } finally {
      await second.close();
    }
  });
});
