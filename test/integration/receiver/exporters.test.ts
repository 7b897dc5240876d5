/** Real OTLP exporters (protobuf and JSON) → a running rotscope → rows in the store, on both backends. */
import { SpanKind, context, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { genAiChatAttributes, tracerProvider } from '../../helpers/otel.ts';

let server: TestServer;
beforeAll(async () => {
  // this test reads the raw spans, kept only with this setting (issue 22)
  server = await startTestServer({ loops: false, config: { keepRawSpans: true } });
});
afterAll(async () => {
  await server?.close();
});

describe.each(['protobuf', 'json'] as const)('the real %s exporter', (protocol) => {
  it('stores GenAI spans with attributes and events intact, and drops spans of no GenAI interest', async () => {
    const provider = tracerProvider({ url: server.url, protocol, serviceName: `svc-${protocol}` });
    const tracer = provider.getTracer('rotscope-test', '1.2.3');
    const conversationId = `conv-${protocol}`;
    let traceId = '';
    {
      const root = tracer.startSpan('invoke_agent planner', { kind: SpanKind.INTERNAL });
      root.setAttribute('gen_ai.operation.name', 'invoke_agent');
      traceId = root.spanContext().traceId;
      const parent = trace.setSpan(context.active(), root);
      for (let i = 0; i < 3; i++) {
        const span = tracer.startSpan(
          `chat claude-sonnet-4-5`,
          { kind: SpanKind.CLIENT, attributes: genAiChatAttributes(i, conversationId) },
          parent,
        );
        span.addEvent('gen_ai.request.attempt', { attempt: 1, 'retry.reason': 'none' });
        span.end();
      }
      tracer
        .startSpan(
          'GET /health',
          { kind: SpanKind.SERVER, attributes: { 'http.request.method': 'GET' } },
          parent,
        )
        .end();
      root.end();
    }
    await provider.forceFlush();
    await provider.shutdown();

    const rows = await server.store.db
      .selectFrom('spans')
      .selectAll()
      .where('trace_id', '=', traceId)
      .orderBy('start_ns')
      .execute();
    expect(rows.map((r) => r.name).sort()).toEqual([
      'chat claude-sonnet-4-5',
      'chat claude-sonnet-4-5',
      'chat claude-sonnet-4-5',
      'invoke_agent planner',
    ]);
    const chat = rows.find((r) => r.name.startsWith('chat'))!;
    expect(chat.workspace_id).toBe('default');
    expect(chat.kind).toBe(3);
    expect(chat.scope_name).toBe('rotscope-test');
    expect(chat.scope_version).toBe('1.2.3');
    expect(chat.resource).toMatchObject({ 'service.name': `svc-${protocol}` });
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.conversation.id': conversationId,
      'gen_ai.usage.input_tokens': 10_000,
      'gen_ai.usage.cache_read.input_tokens': 8_000,
      'gen_ai.response.finish_reasons': ['tool_call'],
    });
    expect(chat.events).toEqual([
      expect.objectContaining({
        name: 'gen_ai.request.attempt',
        attributes: { attempt: 1, 'retry.reason': 'none' },
      }),
    ]);
    expect(BigInt(chat.end_ns)).toBeGreaterThanOrEqual(BigInt(chat.start_ns));
    expect(BigInt(chat.start_ns)).toBeGreaterThan(1_700_000_000_000_000_000n);
  });
});
