/**
 * Telemetry as decoded from OTLP, independent of the wire format (protobuf or JSON).
 * Ids are lowercase hex; times are Unix nanoseconds as decimal strings (int64 does not fit
 * a JS number); attribute values are plain JSON.
 */

/** An OTLP AnyValue as plain JSON: arrays stay arrays, kvlists become objects, bytes become base64. */
export type AttrValue =
  string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };

/**
 * Attribute key/value pairs. Keys are kept exactly as sent (case-sensitive), each an own
 * property: build them with {@link setAttribute}, never `out[key] = value`.
 */
export type Attributes = Record<string, AttrValue>;

/**
 * Sets `out[key]` as an own property whatever the key. Assigning `__proto__` calls
 * Object.prototype's setter instead: a kvlist sent under that key became the object's
 * prototype, its entries hidden attributes every read still found (a call took its model and
 * tokens from one, issue 33). Every other key (`constructor`, `toString`, ...) is an own
 * property when assigned. Objects stay plain rather than `Object.create(null)`: those are
 * dictionary-mode in V8, twice as slow to fill and serialize on every span.
 */
export function setAttribute<T>(out: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__')
    Object.defineProperty(out, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  else out[key] = value;
}

export interface InstrumentationScope {
  name: string;
  version: string;
}

export interface SpanEvent {
  name: string;
  timeUnixNano: string;
  attributes: Attributes;
}

export interface SpanLink {
  traceId: string;
  spanId: string;
  attributes: Attributes;
}

/** One span, with its resource and scope folded in. */
export interface Span {
  traceId: string;
  spanId: string;
  /** null for a root span. */
  parentSpanId: string | null;
  name: string;
  /** OTLP SpanKind number (0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer). */
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Attributes;
  events: SpanEvent[];
  links: SpanLink[];
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  statusMessage: string;
  resource: Attributes;
  scope: InstrumentationScope;
}

/** One OTLP log record (an "event" when eventName or the `event.name` attribute is set). */
export interface LogRecord {
  timeUnixNano: string;
  observedTimeUnixNano: string;
  severityNumber: number;
  severityText: string;
  /** `event_name` field, or the `event.name` attribute when the field is empty. */
  eventName: string;
  body: AttrValue;
  attributes: Attributes;
  traceId: string | null;
  spanId: string | null;
  resource: Attributes;
  scope: InstrumentationScope;
}

/** Why one span or log record of an otherwise valid request was refused. */
export type RejectReason =
  | 'invalid_trace_id'
  | 'invalid_span_id'
  | 'invalid_parent_span_id'
  | 'invalid_timestamp'
  | 'invalid_attribute'
  | 'too_large';

export interface Rejection {
  reason: RejectReason;
  detail: string;
}

/** The result of decoding one export request: what can be stored, and what was refused. */
export interface Decoded<T> {
  items: T[];
  rejected: Rejection[];
}

/** A time in nanoseconds since the epoch (decimal text) as an ISO string, to the millisecond. */
export const nsToIso = (ns: string | null): string | null =>
  ns === null ? null : new Date(Number(BigInt(ns) / 1_000_000n)).toISOString();
