/** Hand-built OTLP request bodies for receiver tests (valid, and deliberately broken). */
import { randomBytes } from 'node:crypto';
import {
  ExportTraceServiceRequest,
  ExportTraceServiceResponse,
  RpcStatus,
} from '../../src/otlp/proto.ts';

export const hex = (bytes: number) => randomBytes(bytes).toString('hex');

export interface JsonSpanOptions {
  traceId?: string;
  spanId?: string;
  name?: string;
  attributes?: Record<string, string | number | boolean>;
  startNs?: bigint;
  /** How long the span lasts (default 1 ms). */
  durationNs?: bigint;
}

/** OTLP/JSON attributes: strings, booleans, integers and doubles as their own value kinds. */
export function jsonAttributes(attributes: Record<string, string | number | boolean>) {
  return Object.entries(attributes).map(([key, value]) => ({
    key,
    value:
      typeof value === 'string'
        ? { stringValue: value }
        : typeof value === 'boolean'
          ? { boolValue: value }
          : Number.isInteger(value)
            ? { intValue: String(value) }
            : { doubleValue: value },
  }));
}

export function jsonSpan(options: JsonSpanOptions = {}) {
  const start = options.startNs ?? BigInt(Date.now()) * 1_000_000n;
  return {
    traceId: options.traceId ?? hex(16),
    spanId: options.spanId ?? hex(8),
    name: options.name ?? 'chat gpt-4o',
    kind: 3,
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: (start + (options.durationNs ?? 1_000_000n)).toString(),
    attributes: jsonAttributes(
      options.attributes ?? {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.usage.input_tokens': 1200,
        'gen_ai.usage.output_tokens': 80,
      },
    ),
  };
}

/** An OTLP/JSON export request of `spans` under one resource (none: no attributes). */
export function jsonRequest(
  spans: unknown[],
  resource: Record<string, string | number | boolean> = {},
  scope = 'test',
) {
  return {
    resourceSpans: [
      {
        resource: { attributes: jsonAttributes(resource) },
        scopeSpans: [{ scope: { name: scope }, spans }],
      },
    ],
  };
}

/** The same request as protobuf bytes (ids converted from hex). */
export function protobufRequest(spans: ReturnType<typeof jsonSpan>[]): Buffer {
  const message = ExportTraceServiceRequest.fromObject({
    resourceSpans: [
      {
        scopeSpans: [
          {
            scope: { name: 'test' },
            spans: spans.map((span) => ({
              ...span,
              traceId: Buffer.from(span.traceId, 'hex'),
              spanId: Buffer.from(span.spanId, 'hex'),
            })),
          },
        ],
      },
    ],
  });
  return Buffer.from(ExportTraceServiceRequest.encode(message).finish());
}

export function decodeStatus(body: Uint8Array): { code: number; message: string } {
  return RpcStatus.toObject(RpcStatus.decode(body)) as { code: number; message: string };
}

export function decodeExportResponse(body: Uint8Array): Record<string, unknown> {
  return ExportTraceServiceResponse.toObject(ExportTraceServiceResponse.decode(body), {
    longs: Number,
  }) as Record<string, unknown>;
}

export async function post(
  url: string,
  body: Uint8Array | string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const response = await fetch(url, { method: 'POST', body, headers });
  return {
    status: response.status,
    headers: response.headers,
    body: Buffer.from(await response.arrayBuffer()),
  };
}
