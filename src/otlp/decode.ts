/**
 * Decodes OTLP export requests (traces and logs), protobuf or JSON, into model spans and log
 * records. A request that cannot be read at all is an `{ ok: false }` value (the receiver
 * answers 400); a readable request with some invalid spans yields the valid ones plus one
 * rejection per invalid span. Nothing here throws on bad input.
 *
 * Accepted beyond the letter of OTLP/JSON, because real senders do it: ids in base64 (the
 * protobuf JSON mapping) as well as hex, int64 as numbers, enum names as well as numbers,
 * snake_case keys, the legacy `instrumentationLibrarySpans`/`instrumentationLibraryLogs`,
 * and Grafana Tempo's `batches` in place of `resourceSpans`.
 */
import type {
  Attributes,
  InstrumentationScope,
  LogRecord,
  Rejection,
  Span,
  SpanEvent,
  SpanLink,
} from '../model/telemetry.ts';
import { ExportLogsServiceRequest } from './proto.ts';
import { decodeTraceWire, decodeTraceWireSliced } from './trace-wire.ts';
import {
  anyValueToJson,
  checkSpanId,
  checkTraceId,
  cleanString,
  spanRejection,
  keyValuesToAttributes,
  nanosString,
  type DecodeResult,
} from './values.ts';

export type Encoding = 'protobuf' | 'json';

export type { DecodeResult };

type Obj = Record<string, unknown>;

/** Reads a field by its lowerCamelCase name, falling back to the proto (snake_case) name. */
function field(obj: Obj, camel: string, snake?: string): unknown {
  const value = obj[camel];
  if (value !== undefined) return value;
  return snake === undefined ? undefined : obj[snake];
}

function asObj(value: unknown): Obj | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Obj)
    : undefined;
}

function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Ids: bytes from protobuf; hex (OTLP/JSON) or base64 (protobuf JSON mapping) strings from JSON. */
function idToHex(value: unknown, bytes: number): string {
  if (value instanceof Uint8Array)
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex');
  if (typeof value !== 'string' || value === '') return '';
  if (value.length === bytes * 2 && /^[0-9a-fA-F]+$/.test(value)) return value.toLowerCase();
  if (value.length === Math.ceil(bytes / 3) * 4 && /^[A-Za-z0-9+/_-]+=*$/.test(value)) {
    const decoded = Buffer.from(value, 'base64');
    if (decoded.length === bytes) return decoded.toString('hex');
  }
  return value.length > 64 ? 'x' : value; // invalid: keep short for the rejection message
}

const SPAN_KINDS: Record<string, number> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 1,
  SPAN_KIND_SERVER: 2,
  SPAN_KIND_CLIENT: 3,
  SPAN_KIND_PRODUCER: 4,
  SPAN_KIND_CONSUMER: 5,
};
/** `SEVERITY_NUMBER_TRACE` (1) … `SEVERITY_NUMBER_FATAL4` (24). */
const SEVERITY_NUMBERS: Record<string, number> = Object.fromEntries(
  ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'].flatMap((level, i) =>
    ['', '2', '3', '4'].map((suffix, j) => [`SEVERITY_NUMBER_${level}${suffix}`, i * 4 + j + 1]),
  ),
);
const STATUS_CODES: Record<string, number> = {
  STATUS_CODE_UNSET: 0,
  STATUS_CODE_OK: 1,
  STATUS_CODE_ERROR: 2,
};

/**
 * An enum sent as a number or a name; values outside `0..max` (unknown to this OTLP version,
 * and too large for the smallint columns) read as 0, unspecified.
 */
function enumNumber(value: unknown, names: Record<string, number>, max: number): number {
  let n = 0;
  if (typeof value === 'number' && Number.isInteger(value)) n = value;
  else if (typeof value === 'string') n = names[value] ?? (/^\d+$/.test(value) ? Number(value) : 0);
  return n >= 0 && n <= max ? n : 0;
}

function scopeOf(container: Obj): InstrumentationScope {
  const scope =
    asObj(field(container, 'scope')) ??
    asObj(field(container, 'instrumentationLibrary', 'instrumentation_library'));
  return {
    name: typeof scope?.name === 'string' ? cleanString(scope.name) : '',
    version: typeof scope?.version === 'string' ? cleanString(scope.version) : '',
  };
}

function resourceOf(container: Obj): Attributes {
  const resource = asObj(field(container, 'resource'));
  return resource ? keyValuesToAttributes(resource.attributes) : {};
}

function str(value: unknown): string {
  return typeof value === 'string' ? cleanString(value) : '';
}

function decodeSpan(raw: Obj, resource: Attributes, scope: InstrumentationScope): Span | Rejection {
  const traceId = idToHex(field(raw, 'traceId', 'trace_id'), 16);
  const spanId = idToHex(field(raw, 'spanId', 'span_id'), 8);
  const parentRaw = idToHex(field(raw, 'parentSpanId', 'parent_span_id'), 8);
  const start = nanosString(field(raw, 'startTimeUnixNano', 'start_time_unix_nano'));
  const end = nanosString(field(raw, 'endTimeUnixNano', 'end_time_unix_nano'));
  const rejection = spanRejection(traceId, spanId, parentRaw, start, end);
  if (rejection) return rejection;
  const events: SpanEvent[] = [];
  for (const item of asList(raw.events)) {
    const event = asObj(item);
    if (!event) continue;
    events.push({
      name: str(event.name),
      timeUnixNano: nanosString(field(event, 'timeUnixNano', 'time_unix_nano')) ?? '0',
      attributes: keyValuesToAttributes(event.attributes),
    });
  }
  const links: SpanLink[] = [];
  for (const item of asList(raw.links)) {
    const link = asObj(item);
    if (!link) continue;
    links.push({
      traceId: idToHex(field(link, 'traceId', 'trace_id'), 16),
      spanId: idToHex(field(link, 'spanId', 'span_id'), 8),
      attributes: keyValuesToAttributes(link.attributes),
    });
  }
  const status = asObj(raw.status);
  return {
    traceId,
    spanId,
    parentSpanId: parentRaw === '' ? null : parentRaw,
    name: str(raw.name),
    kind: enumNumber(raw.kind, SPAN_KINDS, 5),
    startTimeUnixNano: start!, // spanRejection refuses undefined times
    endTimeUnixNano: end!,
    attributes: keyValuesToAttributes(raw.attributes),
    events,
    links,
    statusCode: status ? enumNumber(status.code, STATUS_CODES, 2) : 0,
    statusMessage: status ? str(status.message) : '',
    resource,
    scope,
  };
}

/**
 * The spans of a trace export request as an object tree (OTLP/JSON, or protobufjs's decoding,
 * the reference test/unit/otlp/trace-wire.test.ts holds the wire decoder to).
 */
export function walkTraces(request: Obj): DecodeResult<Span> {
  const resourceList = field(request, 'resourceSpans', 'resource_spans') ?? request.batches;
  if (resourceList !== undefined && !Array.isArray(resourceList)) {
    return { ok: false, reason: 'resourceSpans must be an array' };
  }
  const items: Span[] = [];
  const rejected: Rejection[] = [];
  for (const rs of asList(resourceList)) {
    const resourceSpans = asObj(rs);
    if (!resourceSpans) continue;
    const resource = resourceOf(resourceSpans);
    let scopes = asList(field(resourceSpans, 'scopeSpans', 'scope_spans'));
    if (scopes.length === 0) {
      scopes = asList(
        field(resourceSpans, 'instrumentationLibrarySpans', 'instrumentation_library_spans'),
      );
    }
    for (const ss of scopes) {
      const scopeSpans = asObj(ss);
      if (!scopeSpans) continue;
      const scope = scopeOf(scopeSpans);
      for (const rawSpan of asList(scopeSpans.spans)) {
        const span = asObj(rawSpan);
        const decoded = span
          ? decodeSpan(span, resource, scope)
          : ({ reason: 'invalid_span_id', detail: 'span is not an object' } as Rejection);
        if ('reason' in decoded) rejected.push(decoded);
        else items.push(decoded);
      }
    }
  }
  return { ok: true, value: { items, rejected } };
}

function decodeLog(
  raw: Obj,
  resource: Attributes,
  scope: InstrumentationScope,
): LogRecord | Rejection {
  const traceHex = idToHex(field(raw, 'traceId', 'trace_id'), 16);
  const spanHex = idToHex(field(raw, 'spanId', 'span_id'), 8);
  if (traceHex !== '' && checkTraceId(traceHex) !== 'ok') {
    return { reason: 'invalid_trace_id', detail: `invalid trace id "${traceHex}"` };
  }
  if (spanHex !== '' && checkSpanId(spanHex) !== 'ok') {
    return { reason: 'invalid_span_id', detail: `invalid span id "${spanHex}"` };
  }
  const time = nanosString(field(raw, 'timeUnixNano', 'time_unix_nano'));
  const observed = nanosString(field(raw, 'observedTimeUnixNano', 'observed_time_unix_nano'));
  if (time === undefined || observed === undefined) {
    return { reason: 'invalid_timestamp', detail: 'invalid log record timestamp' };
  }
  const attributes = keyValuesToAttributes(raw.attributes);
  const eventAttr = attributes['event.name'];
  const eventName =
    str(field(raw, 'eventName', 'event_name')) || (typeof eventAttr === 'string' ? eventAttr : '');
  return {
    timeUnixNano: time === '0' ? observed : time,
    observedTimeUnixNano: observed,
    severityNumber: enumNumber(
      field(raw, 'severityNumber', 'severity_number'),
      SEVERITY_NUMBERS,
      24,
    ),
    severityText: str(field(raw, 'severityText', 'severity_text')),
    eventName,
    body: raw.body === undefined || raw.body === null ? null : anyValueToJson(raw.body),
    attributes,
    traceId: traceHex === '' ? null : traceHex,
    spanId: spanHex === '' ? null : spanHex,
    resource,
    scope,
  };
}

function walkLogs(request: Obj): DecodeResult<LogRecord> {
  const resourceList = field(request, 'resourceLogs', 'resource_logs');
  if (resourceList !== undefined && !Array.isArray(resourceList)) {
    return { ok: false, reason: 'resourceLogs must be an array' };
  }
  const items: LogRecord[] = [];
  const rejected: Rejection[] = [];
  for (const rl of asList(resourceList)) {
    const resourceLogs = asObj(rl);
    if (!resourceLogs) continue;
    const resource = resourceOf(resourceLogs);
    let scopes = asList(field(resourceLogs, 'scopeLogs', 'scope_logs'));
    if (scopes.length === 0) {
      scopes = asList(
        field(resourceLogs, 'instrumentationLibraryLogs', 'instrumentation_library_logs'),
      );
    }
    for (const sl of scopes) {
      const scopeLogs = asObj(sl);
      if (!scopeLogs) continue;
      const scope = scopeOf(scopeLogs);
      for (const rawLog of asList(field(scopeLogs, 'logRecords', 'log_records'))) {
        const log = asObj(rawLog);
        const decoded = log
          ? decodeLog(log, resource, scope)
          : ({ reason: 'invalid_attribute', detail: 'log record is not an object' } as Rejection);
        if ('reason' in decoded) rejected.push(decoded);
        else items.push(decoded);
      }
    }
  }
  return { ok: true, value: { items, rejected } };
}

function parseProtobuf(
  type: typeof ExportLogsServiceRequest,
  body: Uint8Array,
): { ok: true; value: Obj } | { ok: false; reason: string } {
  try {
    return { ok: true, value: type.decode(body) as unknown as Obj };
  } catch (error) {
    return { ok: false, reason: `invalid protobuf: ${(error as Error).message}` };
  }
}

/**
 * Timestamps sent as bare JSON numbers (Tempo exports do) exceed 2^53: they are quoted before
 * JSON.parse so they keep every digit.
 */
const BARE_NANOS = /("(?:start|end|observed)?_?[tT]ime(?:UnixNano|_unix_nano)"\s*:\s*)(\d{16,})/g;

function parseJson(
  body: Uint8Array | string,
): { ok: true; value: unknown } | { ok: false; reason: string } {
  try {
    const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
    return { ok: true, value: JSON.parse(text.replace(BARE_NANOS, '$1"$2"')) };
  } catch (error) {
    return { ok: false, reason: `invalid JSON: ${(error as Error).message}` };
  }
}

/**
 * Decodes an ExportTraceServiceRequest body: protobuf straight from the wire into spans
 * (./trace-wire.ts, issue 22), JSON through its object tree.
 */
export function decodeTraces(body: Uint8Array | string, encoding: Encoding): DecodeResult<Span> {
  if (encoding === 'protobuf')
    return decodeTraceWire(typeof body === 'string' ? Buffer.from(body) : body);
  const parsed = parseJson(body);
  if (!parsed.ok) return parsed;
  const request = asObj(parsed.value);
  return request
    ? walkTraces(request)
    : { ok: false, reason: 'the request body must be a JSON object' };
}

/**
 * As decodeTraces, giving the event loop a turn whenever a slice is spent while a protobuf body
 * is read (../model/slices.ts): one large batch does not hold up every other request. A JSON
 * body is read in one piece.
 */
export function decodeTracesSliced(
  body: Uint8Array,
  encoding: Encoding,
): Promise<DecodeResult<Span>> {
  return encoding === 'protobuf'
    ? decodeTraceWireSliced(body)
    : Promise.resolve(decodeTraces(body, encoding));
}

/** Decodes an ExportLogsServiceRequest body. */
export function decodeLogs(body: Uint8Array | string, encoding: Encoding): DecodeResult<LogRecord> {
  if (encoding === 'protobuf') {
    const parsed = parseProtobuf(
      ExportLogsServiceRequest,
      typeof body === 'string' ? Buffer.from(body) : body,
    );
    return parsed.ok ? walkLogs(parsed.value) : parsed;
  }
  const parsed = parseJson(body);
  if (!parsed.ok) return parsed;
  const request = asObj(parsed.value);
  return request
    ? walkLogs(request)
    : { ok: false, reason: 'the request body must be a JSON object' };
}

/**
 * Decodes a file of OTLP/JSON trace requests as found in the wild: one request body, a JSON
 * array of them, a Tempo export (`batches`), or JSON lines (one request per line).
 */
export function decodeTraceJsonFile(text: string): DecodeResult<Span> {
  const whole = parseJson(text);
  const requests: unknown[] = [];
  if (whole.ok) {
    if (Array.isArray(whole.value)) requests.push(...whole.value);
    else requests.push(whole.value);
  } else {
    const lines = text.split('\n').filter((line) => line.trim() !== '');
    for (const [index, line] of lines.entries()) {
      const parsed = parseJson(line);
      if (!parsed.ok) return { ok: false, reason: `line ${index + 1}: ${parsed.reason}` };
      requests.push(parsed.value);
    }
  }
  const items: Span[] = [];
  const rejected: Rejection[] = [];
  for (const request of requests) {
    const obj = asObj(request);
    if (!obj) return { ok: false, reason: 'each request must be a JSON object' };
    const decoded = walkTraces(obj);
    if (!decoded.ok) return decoded;
    items.push(...decoded.value.items);
    rejected.push(...decoded.value.rejected);
  }
  return { ok: true, value: { items, rejected } };
}
