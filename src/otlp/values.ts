/**
 * Conversions shared by the protobuf and JSON decoders: AnyValue to plain JSON, ids to hex,
 * and id validation (OTLP: trace ids 16 bytes, span ids 8 bytes, never all zero).
 */
import {
  setAttribute,
  type AttrValue,
  type Attributes,
  type Decoded,
  type Rejection,
} from '../model/telemetry.ts';

/** What a decoder gives: the items and the rejections, or why the whole request is refused. */
export type DecodeResult<T> = { ok: true; value: Decoded<T> } | { ok: false; reason: string };

const MAX_DEPTH = 16;

/**
 * Postgres text and jsonb cannot hold NUL, and jsonb refuses lone UTF-16 surrogates (which
 * JSON senders can write as "\ud800"): both are replaced by U+FFFD, so one bad string cannot
 * poison a whole batch.
 */
export function cleanString(value: string): string {
  const wellFormed = value.isWellFormed() ? value : value.toWellFormed();
  return wellFormed.includes('\0') ? wellFormed.replaceAll('\0', '\uFFFD') : wellFormed;
}

export type IdCheck = 'ok' | 'invalid';

const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
const HEX = /^[0-9a-f]*$/;

export function checkTraceId(hex: string): IdCheck {
  return hex.length === 32 && hex !== ZERO_TRACE && HEX.test(hex) ? 'ok' : 'invalid';
}

export function checkSpanId(hex: string): IdCheck {
  return hex.length === 16 && hex !== ZERO_SPAN && HEX.test(hex) ? 'ok' : 'invalid';
}

/**
 * Why a span cannot be stored, checked in this order: its trace id, span id, parent span id
 * ('' when it has none), then its times (undefined when invalid, see nanosString); undefined
 * when it can. Both decoders (decode.ts, trace-wire.ts) reject with it.
 */
export function spanRejection(
  traceId: string,
  spanId: string,
  parentSpanId: string,
  start: string | undefined,
  end: string | undefined,
): Rejection | undefined {
  if (checkTraceId(traceId) !== 'ok')
    return { reason: 'invalid_trace_id', detail: `invalid trace id "${traceId}"` };
  if (checkSpanId(spanId) !== 'ok')
    return { reason: 'invalid_span_id', detail: `invalid span id "${spanId}"` };
  if (parentSpanId !== '' && checkSpanId(parentSpanId) !== 'ok')
    return { reason: 'invalid_parent_span_id', detail: `invalid parent span id "${parentSpanId}"` };
  if (start === undefined || end === undefined)
    return { reason: 'invalid_timestamp', detail: `invalid timestamp on span ${spanId}` };
  return undefined;
}

const INT64_LIMIT = 2n ** 63n;
const INT64_MAX_TEXT = String(INT64_LIMIT - 1n);
const DIGITS = /^\d{1,19}$/;

/** Whether decimal digits without leading zeros name a number below 2^63 (no BigInt needed). */
const belowInt64Limit = (digits: string) =>
  DIGITS.test(digits) && (digits.length < INT64_MAX_TEXT.length || digits <= INT64_MAX_TEXT);

/** A Unix-nano timestamp as a decimal string; undefined when it is not a non-negative integer below 2^63. */
export function nanosString(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return '0';
  if (typeof value === 'number') {
    return Number.isFinite(value) && value >= 0 ? BigInt(Math.trunc(value)).toString() : undefined;
  }
  if (typeof value === 'string') {
    return /^\d{1,19}$/.test(value) && BigInt(value) < INT64_LIMIT
      ? BigInt(value).toString()
      : undefined;
  }
  if (typeof value === 'object' && 'toString' in value) {
    // protobufjs Long (fixed64, unsigned): its decimal text has no leading zeros
    const text = String(value);
    return belowInt64Limit(text) ? text : undefined;
  }
  return undefined;
}

/** Converts an int64 that arrived as a Long, a string or a number into a JS number. */
export function int64ToNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Number(value);
  if (value && typeof value === 'object') return Number(String(value));
  return 0;
}

interface KeyValueLike {
  key?: unknown;
  value?: unknown;
}

/**
 * An OTLP AnyValue (protobuf message or OTLP/JSON object) as plain JSON; an empty AnyValue is null.
 */
export function anyValueToJson(value: unknown, depth = 0): AttrValue {
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return null;
  const v = value as Record<string, unknown>;
  // Decoded protobuf messages hold defaults on their prototype; only own properties were sent.
  const pick = (key: string): unknown => (Object.hasOwn(v, key) ? v[key] : undefined);
  const s = pick('stringValue');
  if (typeof s === 'string') return cleanString(s);
  const b = pick('boolValue');
  if (typeof b === 'boolean') return b;
  const i = pick('intValue');
  if (i !== undefined && i !== null) {
    const n = int64ToNumber(i);
    return Number.isFinite(n) ? n : null;
  }
  const d = pick('doubleValue');
  if (d !== undefined && d !== null) {
    const n = Number(d);
    return Number.isFinite(n) ? n : null;
  }
  const arr = pick('arrayValue') as { values?: unknown } | undefined;
  if (arr && typeof arr === 'object') {
    const values = Array.isArray(arr.values) ? arr.values : [];
    return values.map((item) => anyValueToJson(item, depth + 1));
  }
  const kv = pick('kvlistValue') as { values?: unknown } | undefined;
  if (kv && typeof kv === 'object') {
    return keyValuesToAttributes(kv.values, depth + 1);
  }
  const bytes = pick('bytesValue');
  if (bytes instanceof Uint8Array) return Buffer.from(bytes).toString('base64');
  if (typeof bytes === 'string') return bytes;
  return null;
}

/** A KeyValue list as an attributes object. Entries without a string key are skipped. */
export function keyValuesToAttributes(list: unknown, depth = 0): Attributes {
  const out: Attributes = {};
  if (!Array.isArray(list)) return out;
  for (const entry of list as KeyValueLike[]) {
    if (!entry || typeof entry.key !== 'string') continue;
    setAttribute(out, cleanString(entry.key), anyValueToJson(entry.value, depth));
  }
  return out;
}
