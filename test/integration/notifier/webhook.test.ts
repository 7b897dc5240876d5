import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/api/app.ts';
import { generateWebhookSecret } from '../../../src/notifier/config.ts';
import { startNotifier } from '../../../src/notifier/notifier.ts';
import { enqueueDeliveries } from '../../../src/store/deliveries.ts';
import { createTestStore, type TestStore } from '../../helpers/store.ts';
import { startHttpReceiver, type HttpReceiver } from '../../helpers/http-receiver.ts';
import {
  addChannel,
  deliveriesOf,
  eventually,
  FAST,
  memoryLogger,
  queueFinding,
  testConfig,
} from './fixtures.ts';

describe('webhook channel', () => {
  let store: TestStore;
  let receiver: HttpReceiver;

  beforeAll(async () => {
    store = await createTestStore();
    receiver = await startHttpReceiver();
  }, 180_000);
  afterAll(async () => {
    await receiver.close();
    await store.close();
  });

  it('posts the finding signed per Standard Webhooks, verifiable with the standardwebhooks package', async () => {
    const secret = generateWebhookSecret();
    const channelId = await addChannel(store.db, {
      type: 'webhook',
      url: `${receiver.url}/hook?x=1`,
      secret,
      headers: { 'X-Team': 'agents', Authorization: 'Bearer abc' },
    });
    const findingId = await queueFinding(store.db, [channelId]);
    const notifier = startNotifier({ store, config: testConfig(), log: memoryLogger(), ...FAST });
    try {
      const [request] = await receiver.waitFor(1);
      if (!request) throw new Error('no request');
      const [delivery] = await eventually(async () => {
        const rows = await deliveriesOf(store.db, findingId);
        return rows[0]?.status === 'delivered' ? rows : undefined;
      });

      expect(request.method).toBe('POST');
      expect(request.path).toBe('/hook?x=1');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['x-team']).toBe('agents');
      expect(request.headers.authorization).toBe('Bearer abc');
      expect(request.headers['webhook-id']).toBe(delivery?.id);
      expect(delivery?.attemptLog).toHaveLength(1);
      expect(delivery?.attemptLog[0]).toMatchObject({
        status_code: 200,
        outcome: 'delivered',
        error: null,
      });

      const headers = {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      };
      const verified = new Webhook(secret).verify(request.body, headers) as Record<string, unknown>;
      expect(verified).toMatchObject({
        type: 'finding.created',
        data: {
          id: findingId,
          detector: 'context_too_full',
          severity: 'warning',
          workspace: 'default',
          workspaceName: 'default',
          conversationId: 'conv-1',
          traceId: '0af7651916cd43dd8448eb211c80319c',
          spanId: 'b7ad6b7169203331',
          model: 'claude-sonnet-4-5',
          summary: expect.stringContaining('76%'),
          details: { usage: 152_000, window: 200_000 },
          url: `https://rotscope.example.com/#/findings/${findingId}`,
        },
      });
      const data = (verified as { data: Record<string, unknown> }).data;
      // The finding is the API's Finding JSON (one mapper), kind null included.
      expect(data.kind).toBeNull();
      const api = await buildApp({ store, config: testConfig() });
      try {
        const answer = await api.app.inject({ method: 'GET', url: `/api/findings/${findingId}` });
        expect(answer.statusCode).toBe(200);
        const { url: _url, workspaceName: _name, ...finding } = data;
        expect(finding).toEqual(answer.json());
      } finally {
        await api.app.close();
      }
      expect(typeof data.createdAt).toBe('string');

      // A tampered body fails verification.
      const tampered = request.body.replace('"warning"', '"info"');
      expect(tampered).not.toBe(request.body);
      expect(() => new Webhook(secret).verify(tampered, headers)).toThrow();
      // Another secret fails verification.
      expect(() => new Webhook(generateWebhookSecret()).verify(request.body, headers)).toThrow();
      // An old timestamp fails verification (the library allows 5 minutes of skew).
      const webhook = new Webhook(secret);
      const old = new Date(Date.now() - 10 * 60 * 1000);
      const oldSignature = webhook.sign(headers['webhook-id'], old, request.body);
      expect(() =>
        webhook.verify(request.body, {
          ...headers,
          'webhook-timestamp': String(Math.floor(old.getTime() / 1000)),
          'webhook-signature': oldSignature,
        }),
      ).toThrow(/too old/i);
      // Our own signature for that old timestamp equals the library's: same algorithm.
      const { signWebhook } = await import('../../../src/notifier/webhook.ts');
      expect(
        signWebhook(secret, headers['webhook-id'], Math.floor(old.getTime() / 1000), request.body),
      ).toBe(oldSignature);

      // An escalation to critical is a second event with its own delivery id.
      await store.db.transaction().execute(async (trx) => {
        await trx
          .updateTable('findings')
          .set({ severity: 'critical', updated_at: new Date() })
          .where('id', '=', findingId)
          .execute();
        await enqueueDeliveries(trx, {
          workspaceId: 'default',
          findingId,
          severity: 'critical',
          event: 'escalated',
        });
      });
      const [, escalated] = await receiver.waitFor(2);
      const message = new Webhook(secret).verify(escalated!.body, {
        'webhook-id': String(escalated!.headers['webhook-id']),
        'webhook-timestamp': String(escalated!.headers['webhook-timestamp']),
        'webhook-signature': String(escalated!.headers['webhook-signature']),
      });
      expect(message).toMatchObject({
        type: 'finding.escalated',
        data: { id: findingId, severity: 'critical' },
      });
      expect(escalated!.headers['webhook-id']).not.toBe(request.headers['webhook-id']);
    } finally {
      await notifier.stop();
    }
  });
});
