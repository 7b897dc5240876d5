/**
 * The OpenTelemetry SDK side every producer shares, set up as a user would: a Node tracer
 * provider and a logger provider, each with a batch processor and the real OTLP/HTTP
 * exporter (protobuf by default, JSON on request) pointed at rotscope's `/v1/traces` and
 * `/v1/logs`, with the bearer token in the headers when there is one.
 */
import { context, trace } from '@opentelemetry/api';
import { logs } from '@opentelemetry/api-logs';
import { OTLPLogExporter as OTLPLogExporterJson } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as OTLPLogExporterProto } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter as OTLPTraceExporterJson } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPTraceExporterProto } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-node';

/** What every producer function is given. */
export interface ProducerOptions {
  /** rotscope's base URL (or any OTLP/HTTP receiver), e.g. `http://127.0.0.1:4318`. */
  rotscopeUrl: string;
  /** Bearer token for ingest, when the server wants one. */
  token?: string | undefined;
  /** The fake LLM's base URL (test/helpers/fake-llm.ts). */
  llmUrl: string;
  /** OTLP encoding; defaults to each producer's own choice (protobuf unless said otherwise). */
  protocol?: 'proto' | 'json' | undefined;
}

export interface Telemetry {
  tracerProvider: NodeTracerProvider;
  loggerProvider: LoggerProvider;
  /** Flushes both providers, shuts them down and unregisters the globals. */
  shutdown(): Promise<void>;
}

/**
 * Builds the providers and registers them globally (tracer provider, AsyncLocalStorage
 * context manager, logger provider), as an application's telemetry setup does.
 */
export function startTelemetry(
  opts: ProducerOptions,
  serviceName: string,
  defaultProtocol: 'proto' | 'json' = 'proto',
  extraSpanProcessors: SpanProcessor[] = [],
): Telemetry {
  const protocol = opts.protocol ?? defaultProtocol;
  const base = opts.rotscopeUrl.replace(/\/+$/, '');
  const headers: Record<string, string> = opts.token
    ? { Authorization: `Bearer ${opts.token}` }
    : {};
  const traceExporter =
    protocol === 'json'
      ? new OTLPTraceExporterJson({ url: `${base}/v1/traces`, headers })
      : new OTLPTraceExporterProto({ url: `${base}/v1/traces`, headers });
  const logExporter =
    protocol === 'json'
      ? new OTLPLogExporterJson({ url: `${base}/v1/logs`, headers })
      : new OTLPLogExporterProto({ url: `${base}/v1/logs`, headers });
  const resource = resourceFromAttributes({ 'service.name': serviceName });
  const tracerProvider = new NodeTracerProvider({
    resource,
    spanProcessors: [...extraSpanProcessors, new BatchSpanProcessor(traceExporter)],
  });
  tracerProvider.register();
  const loggerProvider = new LoggerProvider({
    resource,
    processors: [new BatchLogRecordProcessor({ exporter: logExporter })],
  });
  logs.setGlobalLoggerProvider(loggerProvider);
  return {
    tracerProvider,
    loggerProvider,
    async shutdown() {
      await tracerProvider.forceFlush();
      await loggerProvider.forceFlush();
      await tracerProvider.shutdown();
      await loggerProvider.shutdown();
      trace.disable();
      context.disable();
      logs.disable();
    },
  };
}
