/**
 * A mute holds back the findings it matches, end to end (issue 37 §3): calls with their project
 * reach a running rotscope over OTLP/HTTP JSON, the evaluator finds context too full in each
 * conversation, and the outbox writes the muted one's delivery `muted` (never sent) while the
 * other reaches the alert's webhook, a real loopback receiver, naming its project. The muted
 * finding is stored and listed. An expired mute matches nothing; once the mute is deleted, new
 * findings of that project are sent again.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpReceiver, type HttpReceiver } from '../helpers/http-receiver.ts';
import { apiCall } from '../helpers/model-calls.ts';
import { hex, jsonRequest, jsonSpan } from '../helpers/otlp-bodies.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const ALPHA = '/srv/app/alpha-svc';
const BETA = '/srv/app/beta-svc';

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

/** Two calls of claude-sonnet-4-5 (200k window): 120k then 150k tokens sent, 75%: too full. */
async function sendConversation(conversationId: string, project: string): Promise<void> {
  const start = BigInt(Date.now() - 60_000) * 1_000_000n;
  const traceId = hex(16);
  const spans = [120_000, 150_000].map((input, i) =>
    jsonSpan({
      traceId,
      name: 'chat claude-sonnet-4-5',
      startNs: start + BigInt(i) * 1_000_000_000n,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'claude-sonnet-4-5',
        'gen_ai.conversation.id': conversationId,
        'gen_ai.usage.input_tokens': input,
        'gen_ai.usage.output_tokens': 100,
        'gen_ai.response.finish_reasons': 'stop',
        'process.working_directory': project,
      },
    }),
  );
  const response = await fetch(`${server.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(jsonRequest(spans)),
  });
  expect(response.status, await response.text()).toBe(200);
}

interface Delivery {
  findingId: string | null;
  status: string;
  muteId: string | null;
  attemptCount: number;
}
interface FindingJson {
  id: string;
  conversationId: string;
  project: string | null;
}

/** The findings of these conversations once each has one and no delivery is pending. */
async function settled(conversationIds: string[]): Promise<Map<string, FindingJson>> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const findings = await api<{ items: FindingJson[] }>('GET', '/api/findings?limit=200');
    const byConversation = new Map(findings.items.map((f) => [f.conversationId, f]));
    const deliveries = await api<{ items: Delivery[] }>('GET', '/api/deliveries?limit=200');
    const done =
      conversationIds.every((id) => byConversation.has(id)) &&
      conversationIds.every((id) =>
        deliveries.items.some((d) => d.findingId === byConversation.get(id)!.id),
      ) &&
      deliveries.items.every((d) => d.status !== 'pending');
    if (done) return byConversation;
    if (Date.now() > deadline)
      throw new Error(`not settled: ${JSON.stringify({ findings, deliveries })}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const deliveriesOf = async (findingId: string) =>
  (await api<{ items: Delivery[] }>('GET', `/api/deliveries?findingId=${findingId}`)).items;

describe('a mute', () => {
  it("stores a matching finding, writes its delivery 'muted' and sends nothing", async () => {
    const channel = await api<{ id: string; secret: string }>('POST', '/api/channels', {
      type: 'webhook',
      name: 'team hook',
      config: { url: `${receiver.url}/hook` },
    });
    await api('PUT', '/api/alerts/context-rot', {
      channels: [{ id: channel.id, minSeverity: 'info' }],
    });
    const mute = await api<{ id: string }>('POST', '/api/mutes', {
      project: ALPHA,
      note: 'alpha is being rewritten',
    });
    // an expired mute of beta's project matches nothing
    await server.store.db
      .insertInto('mutes')
      .values({
        workspace_id: 'default',
        project: BETA,
        until: new Date(Date.now() - 3_600_000),
      })
      .execute();
    const listed = await api<{ items: Array<{ project: string; active: boolean }> }>(
      'GET',
      '/api/mutes',
    );
    expect(listed.items.map((m) => [m.project, m.active])).toEqual([
      [BETA, false],
      [ALPHA, true],
    ]);

    await sendConversation('alpha-1', ALPHA);
    await sendConversation('beta-1', BETA);
    const found = await settled(['alpha-1', 'beta-1']);
    const alpha = found.get('alpha-1')!;
    const beta = found.get('beta-1')!;
    // stored and visible, with its project
    expect(alpha.project).toBe(ALPHA);
    const alphaListed = await api<{ items: FindingJson[] }>(
      'GET',
      `/api/findings?project=${encodeURIComponent(ALPHA)}`,
    );
    expect(alphaListed.items.map((f) => f.id)).toEqual([alpha.id]);

    expect(await deliveriesOf(alpha.id)).toEqual([
      expect.objectContaining({ status: 'muted', muteId: mute.id, attemptCount: 0 }),
    ]);
    expect(await deliveriesOf(beta.id)).toEqual([
      expect.objectContaining({ status: 'delivered', muteId: null, attemptCount: 1 }),
    ]);
    // the receiver got beta's finding only, naming its project
    expect(receiver.requests).toHaveLength(1);
    const request = receiver.requests[0]!;
    const message = new Webhook(channel.secret).verify(request.body, {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    });
    expect(message).toMatchObject({
      type: 'finding.created',
      data: { id: beta.id, conversationId: 'beta-1', project: BETA },
    });
    // the notifier never claims a muted row: still nothing after a whole claim round more
    // (a claim would show in the row's status below before its send arrives)
    await server.notifierPolls.after(2);
    expect(receiver.requests).toHaveLength(1);
    expect((await deliveriesOf(alpha.id))[0]).toMatchObject({ status: 'muted', attemptCount: 0 });

    // deleted, the mute holds nothing back: alpha's next finding is sent
    await fetch(`${server.url}/api/mutes/${mute.id}`, { method: 'DELETE' });
    await sendConversation('alpha-2', ALPHA);
    const after = await settled(['alpha-2']);
    const [, second] = await receiver.waitFor(2, 20_000);
    expect(JSON.parse(second!.body)).toMatchObject({
      data: { id: after.get('alpha-2')!.id, project: ALPHA },
    });
    // the row it held back stays muted, its mute gone
    expect((await deliveriesOf(alpha.id))[0]).toMatchObject({ status: 'muted', muteId: null });
  }, 90_000);
});
