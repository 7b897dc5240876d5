/**
 * The whole product in one test: a real OTLP exporter sends a conversation to a running
 * rotscope; the evaluator finds context rot; the finding is delivered to a webhook (verified
 * with the `standardwebhooks` library) and is visible through the API.
 */
import { SpanKind, context, trace } from '@opentelemetry/api';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpReceiver, type HttpReceiver } from '../helpers/http-receiver.ts';
import { tracerProvider } from '../helpers/otel.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let receiver: HttpReceiver;

beforeAll(async () => {
  server = await startTestServer({ config: { allowPrivateAddresses: true } });
  receiver = await startHttpReceiver();
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} -> ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

interface FindingJson {
  id: string;
  detector: string;
  severity: string;
  kind?: string | null;
  conversationId: string;
  details: Record<string, unknown>;
}

async function waitForFindings(conversationId: string, count: number): Promise<FindingJson[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const page = await api<{ items: FindingJson[] }>(
      'GET',
      `/api/findings?conversationId=${conversationId}`,
    );
    if (page.items.length >= count || Date.now() > deadline) return page.items;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('OTLP in, findings out', () => {
  it('finds a context that fills up and an answer cut off, and delivers them to a signed webhook', async () => {
    const channel = await api<{ id: string; secret: string }>('POST', '/api/channels', {
      type: 'webhook',
      name: 'ops hook',
      config: { url: `${receiver.url}/hook` },
    });
    expect(channel.secret).toMatch(/^whsec_/);
    await api('PUT', '/api/alerts/context-rot', {
      channels: [{ id: channel.id, minSeverity: 'warning' }],
    });

    const provider = tracerProvider({ url: server.url, protocol: 'protobuf' });
    const tracer = provider.getTracer('e2e');
    const conversationId = 'e2e-conversation';
    const root = tracer.startSpan('invoke_agent coder', {
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.conversation.id': conversationId,
      },
    });
    const parent = trace.setSpan(context.active(), root);
    // gpt-4o has a 128k window: 40k, 80k, then 110k tokens (86%: critical), the last one cut off.
    const usages = [40_000, 80_000, 110_000];
    const start = Date.now();
    usages.forEach((input, i) => {
      const span = tracer.startSpan(
        'chat gpt-4o',
        {
          kind: SpanKind.CLIENT,
          startTime: start + i * 1_000,
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.provider.name': 'openai',
            'gen_ai.request.model': 'gpt-4o',
            'gen_ai.conversation.id': conversationId,
            'gen_ai.usage.input_tokens': input,
            'gen_ai.usage.output_tokens': i === 2 ? 4_096 : 200,
            'gen_ai.request.max_tokens': 4_096,
            'gen_ai.response.finish_reasons': [i === 2 ? 'length' : 'stop'],
          },
        },
        parent,
      );
      span.end(start + i * 1_000 + 500);
    });
    root.end();
    await provider.shutdown();

    const findings = await waitForFindings(conversationId, 2);
    const byDetector = Object.fromEntries(findings.map((f) => [f.detector, f]));
    expect(Object.keys(byDetector).sort()).toEqual(['context_too_full', 'output_cut_off']);
    expect(byDetector.context_too_full!.severity).toBe('critical');
    expect(byDetector.output_cut_off!.severity).toBe('warning');

    const requests = await receiver.waitFor(2, 20_000);
    const webhook = new Webhook(channel.secret);
    const delivered = requests.map((request) =>
      webhook.verify(request.body, {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      }),
    ) as Array<{ type: string; data: { detector: string; conversationId: string; url: string } }>;
    expect(delivered.map((payload) => payload.data.detector).sort()).toEqual([
      'context_too_full',
      'output_cut_off',
    ]);
    for (const payload of delivered) {
      expect(payload.type).toMatch(/^finding\./);
      expect(payload.data.conversationId).toBe(conversationId);
      expect(payload.data.url).toMatch(/\/#\/findings\/\d+$/);
    }

    const traceId = root.spanContext().traceId;
    type Calls = {
      calls: Array<{ contextTokens: number; traceId: string }>;
      compactions: unknown[];
    };
    const byConversation = await api<Calls>('GET', `/api/conversations/${conversationId}`);
    expect(byConversation.calls.map((c) => c.contextTokens)).toEqual(usages);
    const byRun = await api<Calls>('GET', `/api/runs/${traceId}`);
    expect(byRun.calls.map((c) => [c.traceId, c.contextTokens])).toEqual(
      usages.map((u) => [traceId, u]),
    );
    expect(byRun.compactions).toEqual([]);

    const coverage = await api<{ calls: number; detectors: Record<string, { share: number }> }>(
      'GET',
      '/api/coverage',
    );
    expect(coverage.calls).toBe(3);
    expect(coverage.detectors.context_too_full!.share).toBe(1);
    expect(coverage.detectors.output_cut_off!.share).toBe(1);
  });
});
