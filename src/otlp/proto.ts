/** The OTLP message types, loaded once from proto/ with protobufjs (which never leaks out of src/otlp). */
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import protobuf from 'protobufjs';

const PROTO_DIR = fileURLToPath(new URL('../../proto/', import.meta.url));

const root = new protobuf.Root();
root.resolvePath = (_origin, target) => path.join(PROTO_DIR, target);
root.loadSync(
  [
    'opentelemetry/proto/collector/trace/v1/trace_service.proto',
    'opentelemetry/proto/collector/logs/v1/logs_service.proto',
    'google/rpc/status.proto',
  ],
  { keepCase: false },
);

export const ExportTraceServiceRequest = root.lookupType(
  'opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest',
);
export const ExportTraceServiceResponse = root.lookupType(
  'opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse',
);
export const ExportLogsServiceRequest = root.lookupType(
  'opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest',
);
export const ExportLogsServiceResponse = root.lookupType(
  'opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse',
);
export const RpcStatus = root.lookupType('google.rpc.Status');
