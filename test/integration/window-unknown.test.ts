/**
 * A model no source knows is said out loud, once (issue 34 §2). Calls of a model id invented here
 * reach a running rotscope over OTLP/HTTP JSON with their token counts: context_too_full cannot
 * judge them, so the workspace's webhook gets one `window.unknown` notice (signed, verified with
 * the standardwebhooks package), Coverage's top row names the model, the calls and the setting,
 * and a second batch of the same model sends nothing more. A window override for the model then
 * closes the notice.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpReceiver, type HttpReceiver } from '../helpers/http-receiver.ts';
import { apiCall, sendModelConversation } from '../helpers/model-calls.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** No catalog row, family or agent knows it. */
const MODEL = 'zephyr-quill-7';

let server: TestServer;
let receiver: HttpReceiver;

beforeAll(async () => {
  server = await startTestServer({
    config: { allowPrivateAddresses: true, publicUrl: 'https://rotscope.example.com' },
  });
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

/** Waits until the evaluator has evaluated every stored conversation (none dirty). */
async function evaluated(conversationIds: string[]): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const rows = await server.store.db
      .selectFrom('conversations')
      .select(['id', 'dirty', 'evaluated_ns'])
      .where('id', 'in', conversationIds)
      .execute();
    if (
      rows.length === conversationIds.length &&
      rows.every((r) => !r.dirty && r.evaluated_ns !== null)
    )
      return;
    if (Date.now() > deadline) throw new Error(`not evaluated: ${JSON.stringify(rows)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface Coverage {
  detectors: Record<string, { covered: number; share: number; hint: string }>;
  producers: Array<{ producer: string; hints: Record<string, string> }>;
  modelsWithoutWindow: string[];
  windowsUnknown: Array<{ model: string; calls: number }>;
}

describe('a model no source knows', () => {
  it('sends one window.unknown notice, names the fix on Coverage, and does not repeat it', async () => {
    const channel = await api<{ id: string; secret: string }>('POST', '/api/channels', {
      type: 'webhook',
      name: 'ops hook',
      config: { url: `${receiver.url}/hook` },
    });
    // critical only: a detector blind to a model hides critical findings too
    await api('PUT', '/api/alerts/context-rot', {
      channels: [{ id: channel.id, minSeverity: 'critical' }],
    });

    await sendConversation('unknown-1', [150_000, 170_000, 190_000]);
    const [request] = await receiver.waitFor(1, 20_000);
    const message = new Webhook(channel.secret).verify(request!.body, {
      'webhook-id': String(request!.headers['webhook-id']),
      'webhook-timestamp': String(request!.headers['webhook-timestamp']),
      'webhook-signature': String(request!.headers['webhook-signature']),
    }) as { type: string; data: Record<string, unknown> };
    expect(message).toMatchObject({
      type: 'window.unknown',
      data: {
        workspace: 'default',
        workspaceName: 'default',
        model: MODEL,
        calls: 3,
        conversations: 1,
        conversationId: 'unknown-1',
        url: 'https://rotscope.example.com/#/coverage',
      },
    });
    const summary = String(message.data.summary);
    expect(summary).toContain(
      `No window known for ${MODEL}: 3 calls not judged for context too full. What to do: Set a window override`,
    );
    expect(summary).toContain(`PUT /api/alerts/context-rot`);
    expect(summary).toContain(`"model": "${MODEL}"`);

    const deliveries = await api<{ items: Array<Record<string, unknown>> }>(
      'GET',
      '/api/deliveries',
    );
    expect(deliveries.items).toHaveLength(1);
    expect(deliveries.items[0]).toMatchObject({
      id: request!.headers['webhook-id'],
      findingId: null,
      event: 'window.unknown',
    });

    const coverage = await api<Coverage>('GET', '/api/coverage');
    const hint = coverage.detectors.context_too_full!.hint;
    expect(hint).toMatch(
      new RegExp(
        `^no window known for ${MODEL}: 3 calls not judged for context too full; set a window override: `,
      ),
    );
    expect(hint).toContain('Context rot alert page');
    expect(hint).not.toMatch(/telemetry/i);
    expect(coverage.detectors.context_too_full!.covered).toBe(0);
    expect(coverage.windowsUnknown).toEqual([{ model: MODEL, calls: 3 }]);
    expect(coverage.modelsWithoutWindow).toEqual([MODEL]);

    const list = await api<{
      items: Array<{ id: string; fullestShare: number | null; windowUnknown: string[] }>;
    }>('GET', '/api/conversations');
    expect(list.items).toEqual([
      expect.objectContaining({ id: 'unknown-1', fullestShare: null, windowUnknown: [MODEL] }),
    ]);

    // A second batch of the same model: judged blind again, announced no more.
    await sendConversation('unknown-2', [120_000, 140_000]);
    await evaluated(['unknown-1', 'unknown-2']);
    // a whole claim round of the notifier since found nothing due: a second notice would be a
    // delivery (checked below) whether or not its send has reached the receiver yet
    await server.notifierPolls.after(2);
    expect(receiver.requests).toHaveLength(1);
    const again = await api<{ items: unknown[] }>('GET', '/api/deliveries');
    expect(again.items).toHaveLength(1);
    const after = await api<Coverage>('GET', '/api/coverage');
    expect(after.detectors.context_too_full!.hint).toMatch(
      new RegExp(`^no window known for ${MODEL}: 5 calls not judged`),
    );

    // A window override for the model: the window is known, the notice closed.
    await api('PUT', '/api/alerts/context-rot', {
      windowOverrides: [{ model: 'zephyr-*', window: 200_000 }],
    });
    const open = await server.store.db
      .selectFrom('window_notices')
      .select(['model', 'known_at'])
      .execute();
    expect(open).toEqual([{ model: MODEL, known_at: expect.any(Date) }]);
    const known = await api<Coverage>('GET', '/api/coverage');
    expect(known.windowsUnknown).toEqual([]);
    expect(known.modelsWithoutWindow).toEqual([]);
    expect(known.detectors.context_too_full!.covered).toBe(5);
    const listed = await api<{ items: Array<{ windowUnknown: string[] }> }>(
      'GET',
      '/api/conversations',
    );
    expect(listed.items.map((c) => c.windowUnknown)).toEqual([[], []]);
  }, 60_000);
});
