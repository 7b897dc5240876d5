/**
 * Real OpenTelemetry SDK tracer providers exporting over the real OTLP/HTTP exporters, and the
 * GenAI conversations the tests send through them.
 */
import { SpanKind, context, trace, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

export function tracerProvider(options: {
  url: string;
  protocol: 'protobuf' | 'json';
  token?: string;
  serviceName?: string;
}): BasicTracerProvider {
  const exporterOptions = {
    url: `${options.url}/v1/traces`,
    headers: options.token ? { Authorization: `Bearer ${options.token}` } : {},
  };
  const exporter =
    options.protocol === 'protobuf'
      ? new ProtoExporter(exporterOptions)
      : new JsonExporter(exporterOptions);
  return new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName ?? 'rotscope-test' }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 50 })],
  });
}

/** Attributes of a realistic OTel GenAI chat span (semconv ≥1.37). */
export function genAiChatAttributes(i: number, conversationId = 'conv-1') {
  return {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'anthropic',
    'gen_ai.request.model': 'claude-sonnet-4-5',
    'gen_ai.response.model': 'claude-sonnet-4-5-20250929',
    'gen_ai.conversation.id': conversationId,
    'gen_ai.usage.input_tokens': 10_000 + i * 1_000,
    'gen_ai.usage.cache_read.input_tokens': 8_000 + i * 900,
    'gen_ai.usage.output_tokens': 350,
    'gen_ai.response.finish_reasons': ['tool_call'],
  };
}

/** One chat call of {@link agentConversation}. */
export interface ChatCallSpec {
  /** Input tokens. */
  input: number;
  /** The finish reason (default `stop`). */
  finish?: string;
  /** `gen_ai.input.messages`, when given. */
  messages?: unknown[];
  /** `gen_ai.output.messages`, when given. */
  output?: unknown[];
}

/**
 * One conversation = one trace of an agent span with gpt-4o chat spans (a 128k window), the
 * calls a second apart after `start` (ms). `finishReasons: false` sends no
 * `gen_ai.response.finish_reasons` (output_cut_off is blind to such calls).
 */
export function agentConversation(
  tracer: Tracer,
  id: string,
  calls: readonly ChatCallSpec[],
  start: number,
  options: { finishReasons?: boolean } = {},
): void {
  const root = tracer.startSpan('invoke_agent worker', {
    startTime: start,
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.conversation.id': id },
  });
  const parent = trace.setSpan(context.active(), root);
  calls.forEach((call, i) => {
    const span = tracer.startSpan(
      'chat gpt-4o',
      {
        kind: SpanKind.CLIENT,
        startTime: start + (i + 1) * 1_000,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.conversation.id': id,
          'gen_ai.usage.input_tokens': call.input,
          'gen_ai.usage.output_tokens': 300,
          ...(options.finishReasons === false
            ? {}
            : { 'gen_ai.response.finish_reasons': [call.finish ?? 'stop'] }),
          ...(call.messages ? { 'gen_ai.input.messages': JSON.stringify(call.messages) } : {}),
          ...(call.output ? { 'gen_ai.output.messages': JSON.stringify(call.output) } : {}),
        },
      },
      parent,
    );
    span.end(start + (i + 1) * 1_000 + 500);
  });
  root.end(start + 10_000);
}
