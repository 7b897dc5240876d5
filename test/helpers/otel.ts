/** Real OpenTelemetry SDK tracer providers exporting over the real OTLP/HTTP exporters. */
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
