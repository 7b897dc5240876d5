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
}

export function jsonSpan(options: JsonSpanOptions = {}) {
  const start = options.startNs ?? BigInt(Date.now()) * 1_000_000n;
  return {
    traceId: options.traceId ?? hex(16),
    spanId: options.spanId ?? hex(8),
    name: options.name ?? 'chat gpt-4o',
    kind: 3,
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: (start + 1_000_000n).toString(),
    attributes: Object.entries(
      options.attributes ?? {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.usage.input_tokens': 1200,
        'gen_ai.usage.output_tokens': 80,
      },
    ).map(([key, value]) => ({
      key,
      value:
        typeof value === 'string'
          ? { stringValue: value }
          : typeof value === 'boolean'
            ? { boolValue: value }
            : Number.isInteger(value)
              ? { intValue: String(value) }
              : { doubleValue: value },
    })),
  };
}

export function jsonRequest(spans: unknown[]) {
  return {
    resourceSpans: [
      { resource: { attributes: [] }, scopeSpans: [{ scope: { name: 'test' }, spans }] },
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
