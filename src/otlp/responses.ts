/** OTLP/HTTP response bodies, in the encoding of the request (OTLP spec, "OTLP/HTTP Response"). */
import type { Encoding } from './decode.ts';
import { ExportLogsServiceResponse, ExportTraceServiceResponse, RpcStatus } from './proto.ts';

export type Signal = 'traces' | 'logs';

export const CONTENT_TYPES: Record<Encoding, string> = {
  protobuf: 'application/x-protobuf',
  json: 'application/json',
};

/**
 * The success body: empty, or with `partialSuccess` when some items were rejected.
 * `rejected` counts spans (traces) or log records (logs).
 */
export function exportResponse(
  signal: Signal,
  encoding: Encoding,
  rejected: number,
  message: string,
): Buffer | string {
  const countKey = signal === 'traces' ? 'rejectedSpans' : 'rejectedLogRecords';
  const partialSuccess = rejected > 0 ? { [countKey]: rejected, errorMessage: message } : undefined;
  if (encoding === 'json') {
    // int64 as a decimal string, per the protobuf JSON mapping that OTLP/JSON uses
    return JSON.stringify(
      partialSuccess
        ? { partialSuccess: { [countKey]: String(rejected), errorMessage: message } }
        : {},
    );
  }
  const type = signal === 'traces' ? ExportTraceServiceResponse : ExportLogsServiceResponse;
  return Buffer.from(
    type.encode(type.fromObject(partialSuccess ? { partialSuccess } : {})).finish(),
  );
}

/** gRPC status codes used in `google.rpc.Status` bodies: the one map's (src/model/errors.ts). */
export { RPC_CODES } from '../model/errors.ts';

/** An error body: `google.rpc.Status` in the request's encoding. */
export function statusBody(encoding: Encoding, code: number, message: string): Buffer | string {
  if (encoding === 'json') return JSON.stringify({ code, message });
  return Buffer.from(RpcStatus.encode(RpcStatus.fromObject({ code, message })).finish());
}

export { decodeLogs, decodeTraces } from './decode.ts';
