/**
 * Reads an OTLP `ExportTraceServiceRequest` straight from the protobuf wire format into model
 * spans, without protobufjs: building protobufjs's message object tree (a prototype-backed
 * object per message, a Long per int64, a Buffer per id) and then walking it cost CPU on
 * every span (issue 22). The result is exactly what `decodeTraces(body, 'protobuf')` gives:
 * the same spans, the same rejections in the same order.
 *
 * To stay equal to protobufjs on every body it accepts, this follows its reading rules:
 * - a known field is read as its declared type whatever wire type its tag says;
 * - a singular message field that appears twice is replaced, not merged (last one wins);
 * - a varint read as 32 bits takes at most 5 bytes, and when the 5th still continues the
 *   next 5 are skipped (the 10-byte form of a negative int32);
 * - an AnyValue with several oneof members set yields the first of string, bool, int,
 *   double, array, kvlist, bytes (what `anyValueToJson` picks among own properties);
 * - messages nested more than 100 deep, and groups likewise, refuse the request;
 * - strings are decoded with Buffer's UTF-8 (protobufjs's BufferReader does the same).
 *
 * Stricter than protobufjs, never reading past the end of the message it is in: a string
 * whose length overruns its message (protobufjs's BufferReader cuts it short and goes on),
 * and an int64 varint whose 4th byte still continues at the end of its message (protobufjs
 * takes it as is), refuse the request. No encoder writes either.
 */
import {
  setAttribute,
  type AttrValue,
  type Attributes,
  type Decoded,
  type InstrumentationScope,
  type Span,
  type SpanEvent,
  type SpanLink,
} from '../model/telemetry.ts';
import { runSliced, runWhole, Slices } from '../model/slices.ts';
import { cleanString, spanRejection, type DecodeResult } from './values.ts';

/** As in values.ts: AnyValues nested deeper become null. */
const MAX_DEPTH = 16;
/** protobufjs's `util.recursionLimit` (protoc's default). */
const RECURSION_LIMIT = 100;

/** The body and the read position; every read is bounded by the end of the enclosing message. */
interface Cursor {
  buf: Buffer;
  pos: number;
  /** The last trace id and parent span id read, which the next span most often repeats. */
  trace: RepeatedId;
  parent: RepeatedId;
}

/** Where an id's bytes were read, and their hex. */
interface RepeatedId {
  start: number;
  stop: number;
  hex: string;
}

class WireError extends Error {}

function fail(message: string): never {
  throw new WireError(message);
}

function outOfRange(r: Cursor, length: number, end: number): never {
  fail(`index out of range: ${r.pos} + ${length} > ${end}`);
}

// ---- scalars -----------------------------------------------------------------------------

/** A varint as uint32, the way protobufjs's `Reader.uint32` consumes it. */
function varint32(r: Cursor, end: number): number {
  const buf = r.buf;
  let p = r.pos;
  let value = 0;
  for (let shift = 0; shift < 28; shift += 7) {
    if (p >= end) outOfRange(r, 1, end);
    const b = buf[p++]!;
    value |= (b & 127) << shift;
    if (b < 128) {
      r.pos = p;
      return value >>> 0;
    }
  }
  if (p >= end) outOfRange(r, 1, end);
  const b = buf[p++]!;
  value |= (b & 15) << 28;
  if (b >= 128) {
    if (p + 5 > end) outOfRange(r, 10, end);
    p += 5;
  }
  r.pos = p;
  return value >>> 0;
}

/** A varint as a signed int64 converted to a JS number, as `Number(String(long))` does. */
function int64(r: Cursor, end: number): number {
  const buf = r.buf;
  let p = r.pos;
  let lo = 0;
  let hi = 0;
  let b = 128;
  for (let i = 0; i < 4 && b >= 128; i++) {
    if (p >= end) outOfRange(r, 1, end);
    b = buf[p++]!;
    lo |= (b & 127) << (i * 7);
  }
  if (b >= 128) {
    // protobufjs takes a 4th byte that still continues when it ends the message; not here
    if (p >= end) fail(`int64 varint cut off by the end of its message at offset ${p}`);
    b = buf[p++]!;
    lo |= (b & 127) << 28;
    hi = (b & 127) >> 4;
    for (let i = 0; i < 5 && b >= 128; i++) {
      if (p >= end) outOfRange(r, 1, end);
      b = buf[p++]!;
      hi |= (b & 127) << (i * 7 + 3);
    }
    if (b >= 128) fail('invalid varint encoding');
  }
  r.pos = p;
  // both terms are exact doubles, so the one rounding of the sum is that of the exact value
  return (hi | 0) * 4294967296 + (lo >>> 0);
}

function skipVarint(r: Cursor, end: number): void {
  const buf = r.buf;
  let p = r.pos;
  do {
    if (p >= end) outOfRange(r, 1, end);
  } while (buf[p++]! & 128);
  r.pos = p;
}

function skip(r: Cursor, length: number, end: number): void {
  if (r.pos + length > end) outOfRange(r, length, end);
  r.pos += length;
}

/** Reads a length prefix and returns where that many bytes end. */
function lengthEnd(r: Cursor, end: number): number {
  const length = varint32(r, end);
  const stop = r.pos + length;
  if (stop > end) outOfRange(r, length, end);
  return stop;
}

function string(r: Cursor, end: number): string {
  const stop = lengthEnd(r, end);
  const start = r.pos;
  r.pos = stop;
  if (start === stop) return '';
  if (stop - start <= MAX_INTERNED) return shortString(r.buf, start, stop);
  return cleanString(r.buf.toString('utf8', start, stop));
}

/**
 * Attribute keys and many values (operation names, models, providers) repeat on every span:
 * a short ASCII string is looked up in a small table (shared by all calls, 4096 strings at
 * most), by a hash of its length and five of its bytes, and decoded only when its slot holds
 * another string. The table only holds ASCII without NUL, which cleanString leaves as is, so
 * a match byte for byte is the answer.
 */
const MAX_INTERNED = 64;
const SLOT_BITS = 12;
const interned: string[] = new Array<string>(1 << SLOT_BITS).fill('');

function shortString(buf: Buffer, start: number, stop: number): string {
  const length = stop - start;
  let hash = Math.imul(length, 0x9e3779b1);
  hash = Math.imul(hash ^ buf[start]!, 0x01000193);
  hash = Math.imul(hash ^ buf[start + (length >> 2)]!, 0x01000193);
  hash = Math.imul(hash ^ buf[start + (length >> 1)]!, 0x01000193);
  hash = Math.imul(hash ^ buf[start + ((length * 3) >> 2)]!, 0x01000193);
  hash = Math.imul(hash ^ buf[stop - 1]!, 0x01000193);
  const slot = hash >>> (32 - SLOT_BITS);
  const held = interned[slot]!;
  if (held.length === length) {
    let p = start;
    while (p < stop && held.charCodeAt(p - start) === buf[p]) p++;
    if (p === stop) return held;
  }
  for (let p = start; p < stop; p++) {
    const c = buf[p]!;
    if (c >= 128 || c === 0) return cleanString(buf.toString('utf8', start, stop));
  }
  const decoded = buf.toString('latin1', start, stop);
  interned[slot] = decoded;
  return decoded;
}

/** A bytes field in `encoding` ('hex' for ids, as idToHex; 'base64' for bytes values). */
function bytes(r: Cursor, end: number, encoding: 'hex' | 'base64'): string {
  const stop = lengthEnd(r, end);
  const start = r.pos;
  r.pos = stop;
  return start === stop ? '' : r.buf.toString(encoding, start, stop);
}

/** An id as hex, reusing the text of `last` when the bytes are the same. */
function repeatedId(r: Cursor, end: number, last: RepeatedId): string {
  const stop = lengthEnd(r, end);
  const start = r.pos;
  r.pos = stop;
  const buf = r.buf;
  if (stop - start === last.stop - last.start) {
    let p = start;
    let q = last.start;
    while (p < stop && buf[p] === buf[q]) {
      p++;
      q++;
    }
    if (p === stop) return last.hex;
  }
  last.start = start;
  last.stop = stop;
  last.hex = start === stop ? '' : buf.toString('hex', start, stop);
  return last.hex;
}

function double(r: Cursor, end: number): number {
  if (r.pos + 8 > end) outOfRange(r, 8, end);
  const value = r.buf.readDoubleLE(r.pos);
  r.pos += 8;
  return value;
}

const TWO_32 = 4294967296;

/**
 * A fixed64 Unix-nano time as decimal text; undefined at 2^63 and above (as nanosString).
 * Real times (~1.8e18) are above 2^53, so rather than with BigInt the text is built from
 * exact integer parts: 2^32 = 4294 * 10^6 + 967296 keeps every partial result below 2^53.
 */
function nanos(r: Cursor, end: number): string | undefined {
  const buf = r.buf;
  const p = r.pos;
  if (p + 8 > end) outOfRange(r, 8, end);
  const lo = (buf[p]! | (buf[p + 1]! << 8) | (buf[p + 2]! << 16) | (buf[p + 3]! << 24)) >>> 0;
  const hi = (buf[p + 4]! | (buf[p + 5]! << 8) | (buf[p + 6]! << 16) | (buf[p + 7]! << 24)) >>> 0;
  r.pos = p + 8;
  if (hi < 0x200000) return String(hi * TWO_32 + lo);
  if (hi >= 0x80000000) return undefined;
  const t = hi * 967296 + lo;
  const low = t % 1e6;
  const top = hi * 4294 + (t - low) / 1e6; // below 10^13: split again into small integers
  const mid = top % 1e6;
  return String((top - mid) / 1e6) + sixDigits(mid) + sixDigits(low);
}

const ZEROS = ['000000', '00000', '0000', '000', '00', '0', ''];
const sixDigits = (n: number): string => {
  const text = String(n);
  return ZEROS[text.length]! + text;
};

/** Skips a field protobufjs does not know, as its `Reader.skipType` does. */
function skipField(r: Cursor, wireType: number, depth: number, end: number): void {
  if (depth > RECURSION_LIMIT) fail('maximum nesting depth exceeded');
  switch (wireType) {
    case 0:
      skipVarint(r, end);
      return;
    case 1:
      skip(r, 8, end);
      return;
    case 2:
      skip(r, varint32(r, end), end);
      return;
    case 3:
      for (;;) {
        const wt = varint32(r, end) & 7;
        if (wt === 4) return;
        skipField(r, wt, depth + 1, end);
      }
    case 5:
      skip(r, 4, end);
      return;
    default:
      fail(`invalid wire type ${wireType} at offset ${r.pos}`);
  }
}

/** Fails like protobufjs when a message is nested too deep (`n` counts from the request, 0). */
function checkNesting(n: number): void {
  if (n > RECURSION_LIMIT) fail('maximum nesting depth exceeded');
}

// ---- common.proto ------------------------------------------------------------------------

/** AnyValue → plain JSON, as anyValueToJson(value, depth). */
function anyValue(r: Cursor, end: number, depth: number, n: number): AttrValue {
  checkNesting(n);
  let str: string | undefined;
  let bool: boolean | undefined;
  let int: number | undefined;
  let dbl: number | undefined;
  let array: AttrValue[] | undefined;
  let kvlist: Attributes | undefined;
  let bin: string | undefined;
  while (r.pos < end) {
    const tag = varint32(r, end);
    switch (tag >>> 3) {
      case 1:
        str = string(r, end);
        break;
      case 2:
        bool = varint32(r, end) !== 0;
        break;
      case 3:
        int = int64(r, end);
        break;
      case 4:
        dbl = double(r, end);
        break;
      case 5:
        array = arrayValue(r, lengthEnd(r, end), depth + 1, n + 1);
        break;
      case 6:
        kvlist = keyValueList(r, lengthEnd(r, end), depth + 1, n + 1);
        break;
      case 7:
        bin = bytes(r, end, 'base64');
        break;
      default:
        skipField(r, tag & 7, n, end);
    }
  }
  if (depth > MAX_DEPTH) return null;
  if (str !== undefined) return str;
  if (bool !== undefined) return bool;
  if (int !== undefined) return int;
  if (dbl !== undefined) return Number.isFinite(dbl) ? dbl : null;
  return array ?? kvlist ?? bin ?? null;
}

function arrayValue(r: Cursor, end: number, depth: number, n: number): AttrValue[] {
  checkNesting(n);
  const values: AttrValue[] = [];
  while (r.pos < end) {
    const tag = varint32(r, end);
    if (tag >>> 3 === 1) values.push(anyValue(r, lengthEnd(r, end), depth, n + 1));
    else skipField(r, tag & 7, n, end);
  }
  return values;
}

function keyValueList(r: Cursor, end: number, depth: number, n: number): Attributes {
  checkNesting(n);
  const out: Attributes = {};
  while (r.pos < end) {
    const tag = varint32(r, end);
    if (tag >>> 3 === 1) keyValue(r, lengthEnd(r, end), out, depth, n + 1);
    else skipField(r, tag & 7, n, end);
  }
  return out;
}

/**
 * One KeyValue into `out`, as keyValuesToAttributes: a later duplicate key wins; a missing
 * key is protobufjs's default, '' (a string, so the entry is kept); a missing value is null.
 */
function keyValue(r: Cursor, end: number, out: Attributes, depth: number, n: number): void {
  checkNesting(n);
  let key = '';
  let value: AttrValue = null;
  while (r.pos < end) {
    const tag = varint32(r, end);
    switch (tag >>> 3) {
      case 1:
        key = string(r, end);
        break;
      case 2:
        value = anyValue(r, lengthEnd(r, end), depth, n + 1);
        break;
      default:
        skipField(r, tag & 7, n, end);
    }
  }
  setAttribute(out, key, value);
}

/** InstrumentationScope, or the deprecated InstrumentationLibrary (same fields). */
function scope(r: Cursor, end: number, n: number): InstrumentationScope {
  const out: InstrumentationScope = { name: '', version: '' };
  while (r.pos < end) {
    const tag = varint32(r, end);
    switch (tag >>> 3) {
      case 1:
        out.name = string(r, end);
        break;
      case 2:
        out.version = string(r, end);
        break;
      default:
        skipField(r, tag & 7, n, end);
    }
  }
  return out;
}

// ---- trace.proto -------------------------------------------------------------------------

function event(r: Cursor, end: number, n: number): SpanEvent {
  const out: SpanEvent = { name: '', timeUnixNano: '0', attributes: {} };
  while (r.pos < end) {
    const tag = varint32(r, end);
    switch (tag >>> 3) {
      case 1:
        out.timeUnixNano = nanos(r, end) ?? '0';
        break;
      case 2:
        out.name = string(r, end);
        break;
      case 3:
        keyValue(r, lengthEnd(r, end), out.attributes, 0, n + 1);
        break;
      case 4:
        varint32(r, end); // dropped_attributes_count
        break;
      default:
        skipField(r, tag & 7, n, end);
    }
  }
  return out;
}

/** A link's ids are hex as sent, not validated (as decodeSpan does). */
function link(r: Cursor, end: number, n: number): SpanLink {
  const out: SpanLink = { traceId: '', spanId: '', attributes: {} };
  while (r.pos < end) {
    const tag = varint32(r, end);
    switch (tag >>> 3) {
      case 1:
        out.traceId = bytes(r, end, 'hex');
        break;
      case 2:
        out.spanId = bytes(r, end, 'hex');
        break;
      case 3:
        skip(r, varint32(r, end), end); // trace_state
        break;
      case 4:
        keyValue(r, lengthEnd(r, end), out.attributes, 0, n + 1);
        break;
      case 5:
        varint32(r, end); // dropped_attributes_count
        break;
      case 6:
        skip(r, 4, end); // flags (fixed32)
        break;
      default:
        skipField(r, tag & 7, n, end);
    }
  }
  return out;
}

/** A Status replaces any earlier one on the span, defaults included. */
function status(r: Cursor, end: number, span: Span, n: number): void {
  span.statusCode = 0;
  span.statusMessage = '';
  while (r.pos < end) {
    const tag = varint32(r, end);
    switch (tag >>> 3) {
      case 2:
        span.statusMessage = string(r, end);
        break;
      case 3: {
        const code = varint32(r, end) | 0;
        span.statusCode = code >= 0 && code <= 2 ? code : 0;
        break;
      }
      default:
        skipField(r, tag & 7, n, end);
    }
  }
}

const PENDING_RESOURCE: Attributes = Object.freeze({}) as Attributes;
const PENDING_SCOPE: InstrumentationScope = Object.freeze({ name: '', version: '' });

/**
 * A Span, validated as decodeSpan does, into `out`. Its resource and scope are set by the
 * callers once their messages are read (they may come after the spans on the wire).
 */
function span(r: Cursor, end: number, out: Decoded<Span>, n: number): void {
  const item: Span = {
    traceId: '',
    spanId: '',
    parentSpanId: null,
    name: '',
    kind: 0,
    startTimeUnixNano: '0',
    endTimeUnixNano: '0',
    attributes: {},
    events: [],
    links: [],
    statusCode: 0,
    statusMessage: '',
    resource: PENDING_RESOURCE,
    scope: PENDING_SCOPE,
  };
  let parent = '';
  let start: string | undefined = '0';
  let stop: string | undefined = '0';
  while (r.pos < end) {
    const tag = varint32(r, end);
    switch (tag >>> 3) {
      case 1:
        item.traceId = repeatedId(r, end, r.trace);
        break;
      case 2:
        item.spanId = bytes(r, end, 'hex');
        break;
      case 3:
        skip(r, varint32(r, end), end); // trace_state
        break;
      case 4:
        parent = repeatedId(r, end, r.parent);
        break;
      case 5:
        item.name = string(r, end);
        break;
      case 6: {
        const kind = varint32(r, end) | 0;
        item.kind = kind >= 0 && kind <= 5 ? kind : 0;
        break;
      }
      case 7:
        start = nanos(r, end);
        break;
      case 8:
        stop = nanos(r, end);
        break;
      case 9:
        keyValue(r, lengthEnd(r, end), item.attributes, 0, n + 1);
        break;
      case 11:
        item.events.push(event(r, lengthEnd(r, end), n + 1));
        break;
      case 13:
        item.links.push(link(r, lengthEnd(r, end), n + 1));
        break;
      case 15:
        status(r, lengthEnd(r, end), item, n + 1);
        break;
      case 10: // dropped_attributes_count
      case 12: // dropped_events_count
      case 14: // dropped_links_count
        varint32(r, end);
        break;
      case 16:
        skip(r, 4, end); // flags (fixed32)
        break;
      default:
        skipField(r, tag & 7, n, end);
    }
  }
  const rejection = spanRejection(item.traceId, item.spanId, parent, start, stop);
  if (rejection) {
    out.rejected.push(rejection);
    return;
  }
  item.parentSpanId = parent === '' ? null : parent;
  item.startTimeUnixNano = start!;
  item.endTimeUnixNano = stop!;
  out.items.push(item);
}

/**
 * ScopeSpans, or the deprecated InstrumentationLibrarySpans (same field numbers). Pauses
 * after each span (../model/slices.ts).
 */
function* scopeSpans(r: Cursor, end: number, out: Decoded<Span>, n: number): Steps {
  const first = out.items.length;
  let found: InstrumentationScope | undefined;
  while (r.pos < end) {
    const tag = varint32(r, end);
    switch (tag >>> 3) {
      case 1:
        found = scope(r, lengthEnd(r, end), n + 1);
        break;
      case 2:
        span(r, lengthEnd(r, end), out, n + 1);
        yield;
        break;
      case 3:
        skip(r, varint32(r, end), end); // schema_url
        break;
      default:
        skipField(r, tag & 7, n, end);
    }
  }
  const shared = found ?? { name: '', version: '' };
  for (let i = first; i < out.items.length; i++) out.items[i]!.scope = shared;
}

function resource(r: Cursor, end: number, n: number): Attributes {
  const out: Attributes = {};
  while (r.pos < end) {
    const tag = varint32(r, end);
    switch (tag >>> 3) {
      case 1:
        keyValue(r, lengthEnd(r, end), out, 0, n + 1);
        break;
      case 2:
        varint32(r, end); // dropped_attributes_count
        break;
      default:
        skipField(r, tag & 7, n, end);
    }
  }
  return out;
}

/**
 * ResourceSpans: its `instrumentation_library_spans` (field 1000) count only when it has no
 * `scope_spans`, wherever either appears, as walkTraces reads them.
 */
function* resourceSpans(r: Cursor, end: number, out: Decoded<Span>, n: number): Steps {
  const first = out.items.length;
  let found: Attributes | undefined;
  let hasScopeSpans = false;
  let legacy: Decoded<Span> | undefined;
  while (r.pos < end) {
    const tag = varint32(r, end);
    switch (tag >>> 3) {
      case 1:
        found = resource(r, lengthEnd(r, end), n + 1);
        break;
      case 2:
        hasScopeSpans = true;
        yield* scopeSpans(r, lengthEnd(r, end), out, n + 1);
        break;
      case 1000:
        legacy ??= { items: [], rejected: [] };
        yield* scopeSpans(r, lengthEnd(r, end), legacy, n + 1);
        break;
      case 3:
        skip(r, varint32(r, end), end); // schema_url
        break;
      default:
        skipField(r, tag & 7, n, end);
    }
  }
  if (legacy && !hasScopeSpans) {
    for (const item of legacy.items) out.items.push(item);
    for (const rejection of legacy.rejected) out.rejected.push(rejection);
  }
  const shared = found ?? {};
  for (let i = first; i < out.items.length; i++) out.items[i]!.resource = shared;
}

type Steps = Generator<void, void>;

/** Decodes a protobuf ExportTraceServiceRequest body; never throws. */
export function decodeTraceWire(body: Uint8Array): DecodeResult<Span> {
  const request = readRequest(body);
  try {
    runWhole(request.steps);
  } catch (error) {
    return refused(error);
  }
  return { ok: true, value: request.out };
}

/**
 * As decodeTraceWire, giving the event loop a turn whenever a slice is spent (a large batch
 * does not hold every other request up while it is read).
 */
export async function decodeTraceWireSliced(
  body: Uint8Array,
  slices = new Slices(),
): Promise<DecodeResult<Span>> {
  const request = readRequest(body);
  try {
    await runSliced(request.steps, slices);
  } catch (error) {
    return refused(error);
  }
  return { ok: true, value: request.out };
}

function refused(error: unknown): DecodeResult<Span> {
  return { ok: false, reason: `invalid protobuf: ${(error as Error).message}` };
}

/** The request's spans and rejections, filled in as `steps` run. */
function readRequest(body: Uint8Array): { out: Decoded<Span>; steps: Steps } {
  const buf = Buffer.isBuffer(body)
    ? body
    : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const r: Cursor = {
    buf,
    pos: 0,
    trace: { start: 0, stop: 0, hex: '' },
    parent: { start: 0, stop: 0, hex: '' },
  };
  const out: Decoded<Span> = { items: [], rejected: [] };
  return { out, steps: requestSteps(r, out) };
}

function* requestSteps(r: Cursor, out: Decoded<Span>): Steps {
  const end = r.buf.length;
  while (r.pos < end) {
    const tag = varint32(r, end);
    if (tag >>> 3 === 1) yield* resourceSpans(r, lengthEnd(r, end), out, 1);
    else skipField(r, tag & 7, 0, end);
  }
}
