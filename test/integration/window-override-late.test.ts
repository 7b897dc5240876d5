/**
 * A window that arrives after the calls re-judges them (issue 34 §1, §3): calls of a model id
 * invented here reach a running rotscope over OTLP/HTTP JSON, are evaluated with no window (no
 * context_too_full finding; the window.unknown notice goes out), and a window override saved for
 * the model afterwards makes the evaluator judge the stored calls again: the context_too_full
 * finding they should have raised is created then, marked late, and reaches the alert's webhook
 * (a real loopback receiver) with `data.late` true. Saving overrides that change no stored
 * call's window marks nothing.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpReceiver, type HttpReceiver } from '../helpers/http-receiver.ts';
import { apiCall, sendModelConversation } from '../helpers/model-calls.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** No catalog row, family or agent knows it. */
const MODEL = 'quill-ember-3';

let server: TestServer;
let receiver: HttpReceiver;

beforeAll(async () => {
  server = await startTestServer({ config: { allowPrivateAddresses: true } });
  receiver = await startHttpReceiver();
}, 180_000);
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const api = <T>(method: string, path: string, body?: unknown) =>
  apiCall<T>(server.url, method, path, body);
const sendConversation = (conversationId: string, inputs: number[]) =>
  sendModelConversation(server.url, MODEL, conversationId, inputs);

const conversation = (id: string) =>
  server.store.db
    .selectFrom('conversations')
    .select(['id', 'dirty', 'evaluated_ns', 'pending_from_ns'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

/** Waits until the conversation is evaluated and clean. */
async function evaluated(id: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const row = await conversation(id);
    if (!row.dirty && row.evaluated_ns !== null) return;
    if (Date.now() > deadline) throw new Error(`not evaluated: ${JSON.stringify(row)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface FindingJson {
  id: string;
  detector: string;
  severity: string;
  model: string | null;
  late: boolean;
  details: Record<string, unknown>;
}

describe('a window override saved after the calls', () => {
  it('creates the findings they should have raised, late, and sends them', async () => {
    const channel = await api<{ id: string; secret: string }>('POST', '/api/channels', {
      type: 'webhook',
      name: 'late hook',
      config: { url: `${receiver.url}/hook` },
    });
    await api('PUT', '/api/alerts/context-rot', {
      channels: [{ id: channel.id, minSeverity: 'warning' }],
    });

    // 150,000 tokens: 75% of a 200,000 window, but no window is known yet
    await sendConversation('late-1', [120_000, 150_000]);
    const [notice] = await receiver.waitFor(1, 20_000);
    expect(JSON.parse(notice!.body)).toMatchObject({ type: 'window.unknown' });
    await evaluated('late-1');
    const none = await api<{ items: FindingJson[] }>('GET', '/api/findings');
    expect(none.items).toEqual([]);

    // an override for another model changes no stored call's window: nothing is judged again
    await api('PUT', '/api/alerts/context-rot', {
      windowOverrides: [{ model: 'other-model-*', window: 100_000 }],
    });
    expect(await conversation('late-1')).toMatchObject({ dirty: false, pending_from_ns: null });

    await api('PUT', '/api/alerts/context-rot', {
      windowOverrides: [
        { model: 'other-model-*', window: 100_000 },
        { model: 'quill-ember-*', window: 200_000 },
      ],
    });
    const requests = await receiver.waitFor(2, 20_000);
    const request = requests[1]!;
    const message = new Webhook(channel.secret).verify(request.body, {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    }) as { type: string; data: FindingJson };
    expect(message).toMatchObject({
      type: 'finding.created',
      data: {
        detector: 'context_too_full',
        severity: 'warning',
        model: MODEL,
        conversationId: 'late-1',
        late: true,
        details: { fullestCall: { model: MODEL, window: 200_000, windowSource: 'override' } },
      },
    });

    const found = await api<{ items: FindingJson[] }>('GET', '/api/findings');
    expect(found.items).toEqual([
      expect.objectContaining({ id: message.data.id, detector: 'context_too_full', late: true }),
    ]);
    const one = await api<FindingJson>('GET', `/api/findings/${message.data.id}`);
    expect(one.late).toBe(true);
    const deliveries = await api<{ items: Array<{ findingId: string | null; event: string }> }>(
      'GET',
      '/api/deliveries',
    );
    expect(deliveries.items.map((d) => [d.event, d.findingId]).sort()).toEqual([
      ['created', message.data.id],
      ['window.unknown', null],
    ]);

    // the same overrides again: nothing marked, nothing more sent
    await evaluated('late-1');
    await api('PUT', '/api/alerts/context-rot', { enabled: true });
    expect(await conversation('late-1')).toMatchObject({ dirty: false });
    // a whole claim round of the notifier after that found nothing due (a send it launched
    // would show as a delivery below before it reaches the receiver)
    await server.notifierPolls.after(2);
    expect(receiver.requests).toHaveLength(2);
    const still = await api<{ items: unknown[] }>('GET', '/api/deliveries');
    expect(still.items).toHaveLength(2);
  }, 60_000);
});
