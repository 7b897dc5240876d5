/**
 * decodeTraceWire against the path it replaces, protobufjs + walkTraces
 * (`protobufjsDecode` below): the same result on every body protobufjs reads, and a
 * refusal wherever protobufjs refuses.
 *
 * Bodies go in as Buffers, as the receiver hands them over. With a plain Uint8Array protobufjs
 * decodes strings with its own UTF-8 reader, which differs from Buffer's on invalid UTF-8
 * (decodeTraceWire always decodes like Buffer), so plain Uint8Arrays are compared on valid
 * UTF-8 only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { agentRun, encodeBatch } from '../../../bench/genai-spans.ts';
import { decodeTraces, walkTraces, type DecodeResult } from '../../../src/otlp/decode.ts';
import type { Span } from '../../../src/model/telemetry.ts';
import { ExportTraceServiceRequest } from '../../../src/otlp/proto.ts';
import { decodeTraceWire } from '../../../src/otlp/trace-wire.ts';
import { jsonSpan, protobufRequest } from '../../helpers/otlp-bodies.ts';

/**
 * The reference: what `decodeTraces(body, 'protobuf')` did before the wire decoder, protobufjs's
 * object tree walked by the JSON path's `walkTraces`.
 */
function protobufjsDecode(body: Uint8Array, _encoding: 'protobuf'): DecodeResult<Span> {
  let request: unknown;
  try {
    request = ExportTraceServiceRequest.decode(body);
  } catch (error) {
    return { ok: false, reason: `invalid protobuf: ${(error as Error).message}` };
  }
  return walkTraces(request as Record<string, unknown>);
}

// ---- the comparison ------------------------------------------------------------------------

/** A valid body: both decoders read it, with the same result. */
function same(body: Uint8Array) {
  const expected = protobufjsDecode(body, 'protobuf');
  expect(expected.ok).toBe(true);
  expect(decodeTraceWire(body)).toStrictEqual(expected);
  // the receiver's entry point reads protobuf with it
  expect(decodeTraces(body, 'protobuf')).toStrictEqual(expected);
  return expected.ok ? expected.value : { items: [], rejected: [] };
}

/** A body protobufjs refuses: decodeTraceWire refuses it too. */
function bothRefuse(body: Uint8Array) {
  expect(protobufjsDecode(body, 'protobuf').ok).toBe(false);
  expect(decodeTraceWire(body)).toMatchObject({
    ok: false,
    reason: expect.stringMatching(/^invalid protobuf: /),
  });
}

/** protobufjs's reader for plain arrays, which (unlike its BufferReader) refuses an overrunning string. */
function plainReaderRefuses(body: Buffer): boolean {
  try {
    ExportTraceServiceRequest.decode(new Uint8Array(body));
    return false;
  } catch {
    return true;
  }
}

type Outcome = 'equal' | 'both refused' | 'stricter';

/**
 * Any body, garbage included. Where protobufjs refuses, decodeTraceWire refuses; where both
 * read it, the results are equal. decodeTraceWire may refuse what protobufjs reads only in
 * the two cases its module comment names: a string overrunning its message (protobufjs's
 * BufferReader cuts it short; its plain-array reader refuses it), or an int64 varint cut off
 * by the end of its message (protobufjs takes the bytes it has).
 */
function agree(body: Buffer): Outcome {
  const expected = protobufjsDecode(body, 'protobuf');
  const actual = decodeTraceWire(body);
  if (!expected.ok) {
    expect(actual).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^invalid protobuf: /),
    });
    return 'both refused';
  }
  if (actual.ok) {
    expect(actual).toStrictEqual(expected);
    return 'equal';
  }
  expect(plainReaderRefuses(body) || /int64 varint cut off/.test(actual.reason)).toBe(true);
  return 'stricter';
}

const encode = (request: object): Buffer =>
  Buffer.from(
    ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject(request)).finish(),
  );

/** mulberry32: a small seeded PRNG, so every run sees the same "random" bodies. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---- hand-built wire bytes -----------------------------------------------------------------

type Bytes = number[];

function varint(value: number | bigint): Bytes {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: Bytes = [];
  for (;;) {
    const low = Number(v & 0x7fn);
    v >>= 7n;
    if (v === 0n) {
      out.push(low);
      return out;
    }
    out.push(low | 0x80);
  }
}
const tag = (field: number, wireType: number) => varint(field * 8 + wireType);
const vfield = (field: number, value: number | bigint) => [...tag(field, 0), ...varint(value)];
function fixed64(field: number, value: bigint): Bytes {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt.asUintN(64, value));
  return [...tag(field, 1), ...b];
}
function double(field: number, value: number): Bytes {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(value);
  return [...tag(field, 1), ...b];
}
const fixed32 = (field: number, value: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(value >>> 0);
  return [...tag(field, 5), ...b];
};
/** A length-delimited field holding the concatenated parts. */
function ld(field: number, ...parts: Bytes[]): Bytes {
  const payload = parts.flat();
  return [...tag(field, 2), ...varint(payload.length), ...payload];
}
const text = (field: number, value: string) => ld(field, [...Buffer.from(value, 'utf8')]);

const TRACE: Bytes = [...Buffer.alloc(16, 0xab)];
const SPAN: Bytes = [...Buffer.alloc(8, 0xcd)];
/** Span fields that make a valid span, followed by `extra`. */
const spanFields = (...extra: Bytes[]): Bytes => [
  ...ld(1, TRACE),
  ...ld(2, SPAN),
  ...fixed64(7, 1_780_000_000_123_456_789n),
  ...fixed64(8, 1_780_000_000_223_456_789n),
  ...extra.flat(),
];
/** A request of one ResourceSpans → one ScopeSpans holding these span messages. */
const oneScope = (...spans: Bytes[]): Buffer =>
  Buffer.from(ld(1, ld(2, ...spans.map((span) => ld(2, span)))));
/** A span attribute (KeyValue, field 9) holding this AnyValue body. */
const attribute = (key: string, anyValue: Bytes) => ld(9, text(1, key), ld(2, anyValue));

/** One unknown field of every wire type: varint (short and 10-byte), fixed64, bytes, group, fixed32. */
const UNKNOWN: Bytes = [
  ...vfield(90, 300),
  ...vfield(91, -1n),
  ...fixed64(92, 7n),
  ...ld(93, [1, 2, 3]),
  ...tag(94, 3),
  ...vfield(1, 5),
  ...ld(2, [9, 9]),
  ...tag(3, 3),
  ...fixed32(1, 1),
  ...tag(3, 4),
  ...fixed64(4, 1n),
  ...tag(94, 4),
  ...fixed32(95, 9),
];

// ---- protobufjs-encoded requests -----------------------------------------------------------

const s = (value: string) => ({ stringValue: value });
const id = (bytes: number, fill = 0x11) => Buffer.alloc(bytes, fill);

/** AnyValues nested `depth` levels deep, alternating arrays and kvlists. */
function nested(depth: number): object {
  if (depth === 0) return s('leaf');
  return depth % 2 === 0
    ? { arrayValue: { values: [nested(depth - 1), { intValue: depth }] } }
    : { kvlistValue: { values: [{ key: `d${depth}`, value: nested(depth - 1) }] } };
}
const deepArray = (depth: number): object =>
  depth === 0 ? s('leaf') : { arrayValue: { values: [deepArray(depth - 1), s(`at ${depth}`)] } };
const deepKvlist = (depth: number): object =>
  depth === 0
    ? s('leaf')
    : { kvlistValue: { values: [{ key: 'k', value: deepKvlist(depth - 1) }] } };

/** Every AnyValue kind, edge values included. */
const VALUES: object[] = [
  s('plain'),
  s(''),
  s('héllo wörld 🌍 中文 ✓'),
  s('nul\0inside'),
  s('lone \ud800 surrogate'),
  s('x'.repeat(70_000)),
  { boolValue: true },
  { boolValue: false },
  { intValue: 0 },
  { intValue: 1 },
  { intValue: -1 },
  { intValue: 123_456_789 },
  { intValue: '9007199254740991' },
  { intValue: '9007199254740993' },
  { intValue: '-9007199254740993' },
  { intValue: '9223372036854775807' },
  { intValue: '-9223372036854775808' },
  { intValue: '4294967296' },
  { intValue: '-4294967296' },
  { doubleValue: 1.5 },
  { doubleValue: 0 },
  { doubleValue: -0 },
  { doubleValue: 5e-324 },
  { doubleValue: 1.7976931348623157e308 },
  { doubleValue: NaN },
  { doubleValue: Infinity },
  { doubleValue: -Infinity },
  { bytesValue: Buffer.from([0, 1, 2, 254, 255]) },
  { bytesValue: Buffer.alloc(0) },
  { arrayValue: { values: [s('a'), { intValue: 2 }, { arrayValue: { values: [] } }, {}] } },
  { arrayValue: {} },
  {
    kvlistValue: {
      values: [
        { key: 'x', value: s('first') },
        { key: 'x', value: { boolValue: true } },
        { key: '', value: s('empty key') },
        { value: s('no key') },
        { key: 'no value' },
        { key: 'empty', value: {} },
      ],
    },
  },
  { kvlistValue: {} },
  {},
  ...[0, 1, 15, 16, 17, 18, 25].flatMap((depth) => [
    nested(depth),
    deepArray(depth),
    deepKvlist(depth),
  ]),
  deepArray(40),
];

const ATTRIBUTES = [
  ...VALUES.map((value, i) => ({ key: `k${i}`, value })),
  { key: 'dup', value: s('first') },
  { key: 'other', value: s('between') },
  { key: 'dup', value: s('second') },
  { key: '', value: s('empty key') },
  { value: s('missing key') },
  { key: 'missing value' },
  { key: '10', value: s('integer-like keys sort first') },
  { key: '2', value: s('in both decoders') },
  { key: 'nul\0key', value: s('v') },
  { key: '__proto__', value: s('an own attribute, as any other key') },
];

const TIMES = [
  '0',
  '1',
  '4294967295',
  '4294967296',
  '9007199254740991', // 2^53 - 1
  '9007199254740992',
  '9007199254740993', // 2^53 + 1
  '1780000000000000000',
  '1780000000000000001',
  '1780000000000999999',
  '1780000000123456789',
  '9223372036854775807', // 2^63 - 1
  '9223372036854775808', // 2^63: invalid
  '18446744073709551615', // 2^64 - 1: invalid
];

function span(fields: Record<string, unknown> = {}, n = 0) {
  return {
    traceId: id(16, 0x10 + (n % 200)),
    spanId: id(8, 0x20 + (n % 200)),
    name: `span ${n}`,
    kind: 3,
    startTimeUnixNano: '1780000000123456789',
    endTimeUnixNano: '1780000000223456789',
    ...fields,
  };
}

/** Spans covering every field and every rejection, in one request of several resources. */
const RICH_SPANS = [
  span({
    parentSpanId: id(8, 0x33),
    traceState: 'k=v',
    flags: 0x301,
    attributes: ATTRIBUTES,
    droppedAttributesCount: 3,
    events: [
      { timeUnixNano: '1780000000123456790', name: 'ev', attributes: ATTRIBUTES.slice(0, 8) },
      { name: 'no time' },
      { timeUnixNano: '9223372036854775808', name: 'time at 2^63 reads 0' },
      { timeUnixNano: '18446744073709551615' },
      {},
    ],
    droppedEventsCount: 1,
    links: [
      { traceId: id(16, 0x44), spanId: id(8, 0x55), traceState: 'a=b', attributes: ATTRIBUTES },
      { traceId: id(3), spanId: id(0), flags: 1 },
      {},
    ],
    droppedLinksCount: 2,
    status: { code: 2, message: 'boom \0 💥' },
  }),
  span({ status: {} }),
  span({ status: { code: 1 } }),
  span({ status: { message: 'message only' } }),
  span({ status: { code: 3 } }),
  span({ status: { code: -1 } }),
  span({ name: '' }),
  span({ name: 'unicode ✓ 🌍 and \0 and \udc00' }),
  ...[-1, 0, 1, 2, 3, 4, 5, 6, 100, 2147483647, -2147483648].map((kind, n) =>
    span({ kind }, 100 + n),
  ),
  ...TIMES.flatMap((time, n) => [
    span({ startTimeUnixNano: time }, 200 + n),
    span({ endTimeUnixNano: time }, 300 + n),
    span({ events: [{ timeUnixNano: time }] }, 400 + n),
  ]),
  span({ startTimeUnixNano: undefined, endTimeUnixNano: undefined }),
  // rejections
  span({ traceId: id(15) }),
  span({ traceId: id(17) }),
  span({ traceId: id(0) }),
  span({ traceId: undefined }),
  span({ traceId: id(16, 0) }),
  span({ traceId: id(40) }),
  span({ spanId: id(7) }),
  span({ spanId: id(8, 0) }),
  span({ spanId: undefined }),
  span({ parentSpanId: id(0) }),
  span({ parentSpanId: id(8, 0) }),
  span({ parentSpanId: id(9) }),
  span({ traceId: id(16, 0), spanId: id(8, 0), startTimeUnixNano: '9223372036854775808' }),
  {},
];

const RICH_REQUEST = {
  resourceSpans: [
    {
      resource: {
        attributes: [
          { key: 'service.name', value: s('svc') },
          { key: 'service.name', value: s('svc again') },
          { key: 'deep', value: nested(20) },
        ],
        droppedAttributesCount: 1,
      },
      schemaUrl: 'https://opentelemetry.io/schemas/1.26.0',
      scopeSpans: [
        { scope: { name: 'scope-a', version: '1.0.0' }, spans: RICH_SPANS, schemaUrl: 'x' },
        { spans: [span({}, 900)] },
        { scope: { name: 'name only' }, spans: [span({}, 901), span({ traceId: id(1) })] },
        {},
      ],
    },
    {},
    { resource: {}, scopeSpans: [{ scope: {}, spans: [span({}, 902)] }] },
    // the deprecated layout, alone: read
    {
      resource: { attributes: [{ key: 'legacy', value: { boolValue: true } }] },
      instrumentationLibrarySpans: [
        { instrumentationLibrary: { name: 'lib', version: '0.1' }, spans: [span({}, 903)] },
        { spans: [span({}, 904), span({ spanId: id(8, 0) })] },
      ],
    },
    // beside scope_spans: ignored
    {
      instrumentationLibrarySpans: [
        { instrumentationLibrary: { name: 'ignored' }, spans: [span()] },
      ],
      scopeSpans: [{ scope: { name: 'kept' }, spans: [span({}, 905)] }],
    },
  ],
};
const RICH = encode(RICH_REQUEST);

/** A span of every field, small enough to cut at every byte (no long string, no deep values). */
const CUT_ATTRIBUTES = [
  ...ATTRIBUTES.slice(0, 5),
  ...ATTRIBUTES.slice(6, 34),
  { key: 'nested', value: nested(4) },
  ...ATTRIBUTES.slice(-10),
];
const CUT_SPAN = span({
  parentSpanId: id(8, 0x33),
  traceState: 'k=v',
  flags: 1,
  attributes: CUT_ATTRIBUTES,
  events: [
    { timeUnixNano: '1780000000123456790', name: 'ev', attributes: CUT_ATTRIBUTES.slice(0, 8) },
  ],
  links: [{ traceId: id(16, 0x44), spanId: id(8, 0x55), attributes: CUT_ATTRIBUTES.slice(8, 20) }],
  status: { code: 2, message: 'boom' },
});

// ---- fixtures ------------------------------------------------------------------------------

const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));

function readBody(file: string): Buffer {
  const raw = readFileSync(FIXTURES + file);
  if (file.endsWith('.br')) return brotliDecompressSync(raw);
  if (file.endsWith('.gz')) return gunzipSync(raw);
  return raw;
}

const fixtureFiles = (readdirSync(FIXTURES, { recursive: true }) as string[]).sort();
const PROTOBUF_FIXTURES = fixtureFiles.filter((f) => /traces[^/]*\.pb(\.br|\.gz)?$/.test(f));
const JSON_FIXTURES = fixtureFiles.filter(
  (f) =>
    /traces[^/]*\.json(\.br|\.gz)?$/.test(f) ||
    /^producers\/[^/]+\.json$/.test(f) ||
    /^real\/(tempo-export|otlp-json)[^/]*\.json$/.test(f),
);

const ID_KEYS = new Set(['traceId', 'spanId', 'parentSpanId']);

/** OTLP/JSON (hex ids, Tempo's `batches`) as a protobufjs fromObject input. */
function forProtobuf(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((item) => forProtobuf(item));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k === 'batches' ? 'resourceSpans' : k,
        forProtobuf(v, k),
      ]),
    );
  }
  if (typeof value === 'string' && ID_KEYS.has(key) && /^([0-9a-fA-F]{2})*$/.test(value))
    return Buffer.from(value, 'hex');
  return value;
}

/** The trace request bodies in a JSON fixture (one body, an array of them, or `{traces: [...]}`). */
function jsonRequests(value: unknown): object[] {
  if (Array.isArray(value)) return value.flatMap(jsonRequests);
  if (value === null || typeof value !== 'object') return [];
  const obj = value as Record<string, unknown>;
  if ('resourceSpans' in obj || 'batches' in obj) return [obj];
  return Array.isArray(obj.traces) ? obj.traces.flatMap(jsonRequests) : [];
}

// ---- tests ---------------------------------------------------------------------------------

describe('decodeTraceWire, on valid bodies', () => {
  it('reads empty requests', () => {
    expect(same(Buffer.alloc(0))).toEqual({ items: [], rejected: [] });
    same(encode({ resourceSpans: [] }));
    same(encode({ resourceSpans: [{}, {}] }));
    same(encode({ resourceSpans: [{ scopeSpans: [{}] }] }));
    same(encode({ resourceSpans: [{ resource: {}, scopeSpans: [{ scope: {}, spans: [{}] }] }] }));
  });

  it('reads every field, value kind, id, timestamp and enum edge exactly as protobufjs', () => {
    const decoded = same(RICH);
    expect(decoded.items.length).toBeGreaterThan(40);
    expect(decoded.rejected.length).toBeGreaterThan(15);
    const first = decoded.items[0]!;
    expect(first.attributes.dup).toBe('second');
    expect(first.attributes['']).toBe('missing key'); // protobufjs's default key '' is kept
    expect(first.attributes.k14).toBe(-9007199254740992); // Number('-9007199254740993')
  });

  it('reads a plain Uint8Array view into a larger buffer (valid UTF-8)', () => {
    const body = encodeBatch(agentRun(1, 3, 1_780_000_000_000_000_000n));
    const backing = new Uint8Array(body.length + 11);
    backing.set(body, 7);
    const view = backing.subarray(7, 7 + body.length);
    expect(Buffer.isBuffer(view)).toBe(false);
    same(view);
  });

  it('reads random 64-bit timestamps exactly', () => {
    const random = prng(64);
    const word = () => BigInt(Math.floor(random() * 2 ** 32));
    const times = Array.from({ length: 3000 }, (_, i) => {
      const hi = i % 3 === 0 ? word() & 0x3fffffn : word(); // around 2^53 and across the range
      return ((hi << 32n) | word()).toString();
    });
    const spans = times.map((time, n) =>
      span({ startTimeUnixNano: time, events: [{ timeUnixNano: time }] }, n),
    );
    const decoded = same(encode({ resourceSpans: [{ scopeSpans: [{ spans }] }] }));
    expect(decoded.items.length + decoded.rejected.length).toBe(3000);
  });

  it('skips unknown fields of every wire type at every level', () => {
    const U = UNKNOWN;
    const str = (value: string) => [...U, ...text(1, value), ...U];
    const kv = (key: string, value: Bytes) => [...U, ...text(1, key), ...U, ...ld(2, value), ...U];
    const withUnknown = (u: Bytes) => {
      const value = [
        ...u,
        ...ld(
          5,
          u,
          ld(1, str('in array')),
          u,
          ld(1, [...u, ...ld(6, u, ld(1, kv('in kvlist', str('v'))), u)]),
        ),
        ...u,
      ];
      const spanBody = [
        ...u,
        ...ld(1, TRACE),
        ...u,
        ...ld(2, SPAN),
        ...fixed64(7, 5n),
        ...u,
        ...fixed64(8, 6n),
        ...ld(9, kv('a', value)),
        ...u,
        ...ld(11, u, fixed64(1, 7n), u, text(2, 'event'), ld(3, kv('e', str('x'))), u),
        ...ld(13, u, ld(1, TRACE), u, ld(2, SPAN), ld(4, kv('l', str('y'))), u),
        ...ld(15, u, text(2, 'msg'), u, vfield(3, 2), u),
        ...u,
      ];
      const scopeSpans = [
        ...u,
        ...ld(1, u, text(1, 'scope'), u, text(2, '1'), u),
        ...ld(2, spanBody),
        ...u,
      ];
      const resourceSpans = [
        ...u,
        ...ld(1, u, ld(1, kv('r', str('z'))), u),
        ...ld(2, scopeSpans),
        ...u,
      ];
      return Buffer.from([...u, ...ld(1, resourceSpans), ...u]);
    };
    expect(same(withUnknown([])).items).toHaveLength(1);
    same(withUnknown(U));
    expect(decodeTraceWire(withUnknown(U))).toStrictEqual(decodeTraceWire(withUnknown([])));
  });

  it('reads invalid UTF-8 and odd strings as Buffer does', () => {
    const bad = [
      [0xff],
      [0xfe, 0x41],
      [0xc0, 0x80],
      [0xed, 0xa0, 0x80], // an encoded lone surrogate
      [0xf0, 0x9f, 0x98], // a cut 4-byte sequence
      [0xe2, 0x82],
      [0x61, 0x00, 0x62],
      [0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
      [0xf0, 0x9f, 0x98, 0x80],
    ];
    for (const bytes of bad) {
      same(
        oneScope(
          spanFields(
            ld(5, bytes),
            ld(9, ld(1, bytes), ld(2, ld(1, bytes))),
            ld(15, ld(2, bytes)),
            ld(11, ld(2, bytes)),
          ),
        ),
      );
      same(Buffer.from(ld(1, ld(2, ld(1, ld(1, bytes), ld(2, bytes)), ld(2, spanFields())))));
    }
  });

  it('picks among several oneof members as anyValueToJson picks among own properties', () => {
    const anyValues: Bytes[] = [
      [...vfield(3, 7), ...text(1, 'string wins')],
      [...text(1, 'a'), ...text(1, 'last string')],
      [...double(4, 2.5), ...vfield(2, 1)],
      [...double(4, 2.5), ...vfield(3, 9)],
      [...double(4, NaN), ...ld(5, [])],
      [...ld(7, [1]), ...ld(5, ld(1, text(1, 'x')))],
      [...ld(7, [1]), ...ld(6, ld(1, text(1, 'k'), ld(2, vfield(2, 1))))],
      [...ld(6, []), ...ld(5, [])],
      [...ld(5, ld(1, text(1, 'x'))), ...ld(5, [])], // a repeated message field is replaced
      [...ld(7, [1]), ...ld(7, [2, 3])],
      vfield(2, 2 ** 32), // bool read as uint32: 0, false
      vfield(2, 2 ** 32 + 1),
      vfield(2, 0),
      vfield(3, -1n),
      vfield(3, 2n ** 63n),
      vfield(3, 2n ** 64n - 1n),
      vfield(3, 2n ** 53n + 1n),
      [],
    ];
    for (const anyValue of anyValues) same(oneScope(spanFields(attribute('v', anyValue))));
  });

  it('keeps __proto__, constructor and toString as own attributes at every level (issue 33)', () => {
    const evil = {
      kvlistValue: {
        values: [
          { key: 'gen_ai.request.model', value: s('evil') },
          { key: 'gen_ai.usage.input_tokens', value: { intValue: 777_777 } },
          {
            key: '__proto__',
            value: { kvlistValue: { values: [{ key: 'deep', value: s('x') }] } },
          },
        ],
      },
    };
    const attributes = [
      { key: 'gen_ai.request.model', value: s('gpt-4o') },
      { key: '__proto__', value: evil },
      { key: 'constructor', value: s('c') },
      { key: 'toString', value: s('t') },
    ];
    const decoded = same(
      encode({
        resourceSpans: [
          {
            resource: { attributes },
            scopeSpans: [
              {
                spans: [
                  span({
                    attributes,
                    events: [{ name: 'ev', attributes }],
                    links: [{ traceId: id(16), spanId: id(8), attributes }],
                  }),
                ],
              },
            ],
          },
        ],
      }),
    );
    const item = decoded.items[0]!;
    for (const attrs of [
      item.attributes,
      item.resource,
      item.events[0]!.attributes,
      item.links[0]!.attributes,
    ]) {
      expect(Object.getPrototypeOf(attrs)).toBe(Object.prototype);
      expect(Object.keys(attrs)).toEqual([
        'gen_ai.request.model',
        '__proto__',
        'constructor',
        'toString',
      ]);
      expect(attrs['gen_ai.request.model']).toBe('gpt-4o');
      expect(attrs['gen_ai.usage.input_tokens']).toBeUndefined();
      const kvlist = Object.getOwnPropertyDescriptor(attrs, '__proto__')?.value as object;
      expect(Object.getPrototypeOf(kvlist)).toBe(Object.prototype);
      expect(Object.keys(kvlist)).toEqual([
        'gen_ai.request.model',
        'gen_ai.usage.input_tokens',
        '__proto__',
      ]);
      expect(JSON.parse(JSON.stringify(attrs))).toEqual(attrs);
    }
  });

  it('replaces singular messages and scalars seen twice, wherever they appear', () => {
    same(oneScope(spanFields(ld(15, text(2, 'first'), vfield(3, 2)), ld(15, vfield(3, 1)))));
    same(oneScope(spanFields(ld(1, [1, 2]), ld(1, TRACE), text(5, 'a'), text(5, 'b'))));
    same(oneScope(spanFields(vfield(6, 2), vfield(6, 9), fixed64(7, 2n ** 63n), fixed64(7, 3n))));
    same(oneScope(spanFields(ld(9, text(1, 'k'), ld(2, text(1, 'a')), ld(2, vfield(3, 5))))));
    same(oneScope(spanFields(ld(9, text(1, 'k1'), text(1, 'k2'), ld(2, text(1, 'a'))))));
    // scope and resource after the spans, and twice
    const spanMsg = ld(2, spanFields());
    const scopeA = ld(1, text(1, 'a'), text(2, '1'));
    const scopeB = ld(1, text(1, 'b'));
    const res = (key: string) => ld(1, ld(1, text(1, key), ld(2, text(1, 'v'))));
    same(Buffer.from(ld(1, ld(2, spanMsg, scopeA, spanMsg, scopeB), res('r1'), res('r2'))));
    // the deprecated layout before scope_spans: still ignored
    same(Buffer.from(ld(1, ld(1000, scopeA, spanMsg), ld(2, scopeB, spanMsg))));
    same(Buffer.from([...ld(1, ld(1000, scopeA, spanMsg)), ...ld(1, ld(2, scopeB, spanMsg))]));
  });

  it('reads a known field by its declared type whatever its wire type, as protobufjs does', () => {
    same(oneScope(spanFields([...tag(5, 0), 3, 0x61, 0x62, 0x63]))); // name sent as a varint
    same(oneScope(spanFields([...tag(6, 2), 2]))); // kind sent as bytes
    same(oneScope(spanFields([...tag(7, 0), ...Buffer.alloc(8, 1)]))); // time as a varint
    same(oneScope(spanFields([...tag(10, 2), 0]))); // a count sent as bytes
    same(oneScope(spanFields([...tag(16, 0), 1, 2, 3, 4]))); // flags sent as a varint
  });

  it('reads groups nested 101 deep and nested AnyValues up to the protobufjs limit', () => {
    const groups = (depth: number) => [
      ...Array.from({ length: depth }, () => tag(99, 3)).flat(),
      ...Array.from({ length: depth }, () => tag(99, 4)).flat(),
    ];
    same(Buffer.from(groups(101)));
    bothRefuse(Buffer.from(groups(102)));
    same(oneScope(spanFields(groups(98))));
    bothRefuse(oneScope(spanFields(groups(99))));
    let value: Bytes = text(1, 'leaf');
    const outcomes = new Set<string>();
    for (let depth = 1; depth <= 60; depth++) {
      value = ld(5, ld(1, value));
      outcomes.add(agree(oneScope(spanFields(attribute('deep', value)))));
    }
    expect([...outcomes].sort()).toEqual(['both refused', 'equal']);
  });

  it('keeps short strings and repeated ids apart across spans and across calls', () => {
    const random = prng(7);
    const word = (length: number) =>
      Array.from({ length }, () => 'ab_.0é\0'[Math.floor(random() * 7)]).join('');
    const attributes = Array.from({ length: 6000 }, (_, i) => ({
      key: i % 3 === 0 ? `call_${i % 10}_${i % 7}` : word(1 + (i % 70)),
      value: s(i % 2 === 0 ? word(1 + (i % 66)) : `v${i}`),
    }));
    const spans = Array.from({ length: 60 }, (_, n) =>
      span({ attributes: attributes.slice(n * 100, n * 100 + 100) }, n),
    );
    const body = encode({ resourceSpans: [{ scopeSpans: [{ spans }] }] });
    const reversed = encode({ resourceSpans: [{ scopeSpans: [{ spans: spans.toReversed() }] }] });
    same(body);
    same(reversed);
    same(body);
    const a = id(16, 0xa1);
    const p = id(8, 0x51);
    const idSpans = [
      [a, p],
      [a, p],
      [a.subarray(0, 15), p],
      [a, undefined],
      [a, p.subarray(0, 7)],
      [id(16, 0xb2), p],
      [undefined, undefined],
      [undefined, id(8, 0)],
      [a, id(8, 0)],
      [Buffer.concat([a, Buffer.from([1])]), p],
      [a, p],
    ].map(([traceId, parentSpanId], n) => span({ traceId, parentSpanId }, n));
    same(encode({ resourceSpans: [{ scopeSpans: [{ spans: idSpans }] }] }));
  });

  it('reads the real protobuf captures', () => {
    expect(PROTOBUF_FIXTURES.length).toBeGreaterThan(10);
    let spans = 0;
    for (const file of PROTOBUF_FIXTURES) spans += same(readBody(file)).items.length;
    expect(spans).toBeGreaterThan(50);
  });

  it('reads the real JSON captures once encoded as protobuf', () => {
    expect(JSON_FIXTURES.length).toBeGreaterThan(20);
    let spans = 0;
    for (const file of JSON_FIXTURES) {
      for (const request of jsonRequests(JSON.parse(readBody(file).toString('utf8')))) {
        spans += same(encode(forProtobuf(request) as object)).items.length;
      }
    }
    expect(spans).toBeGreaterThan(200);
  });

  it('reads the bench and helper bodies', () => {
    for (const content of [true, false]) {
      same(encodeBatch(agentRun(2, 6, 1_780_000_000_000_000_000n, { content, cutOffLast: true })));
    }
    same(
      protobufRequest([jsonSpan(), jsonSpan({ name: 'other', attributes: { a: 1.5, b: true } })]),
    );
  });
});

describe('decodeTraceWire, on broken bodies', () => {
  it('refuses wire types 6 and 7, a stray end-group, and groups cut off', () => {
    for (const bad of [tag(99, 6), tag(99, 7), tag(99, 4), tag(99, 3)]) {
      bothRefuse(Buffer.from(bad));
      bothRefuse(oneScope(spanFields(bad)));
      bothRefuse(oneScope(spanFields(attribute('k', bad))));
      bothRefuse(oneScope(spanFields(ld(11, bad))));
      bothRefuse(Buffer.from(ld(1, ld(1, bad))));
    }
  });

  it('refuses lengths past the end and varints that never end', () => {
    bothRefuse(Buffer.from([0x0a, 0x05, 0x01]));
    bothRefuse(Buffer.from([0x0a]));
    bothRefuse(Buffer.from([0x8a]));
    bothRefuse(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]));
    bothRefuse(Buffer.from([...vfield(90, 1).slice(0, 1), 0x80, 0x80]));
    bothRefuse(oneScope(spanFields([...tag(7, 1), 1, 2, 3]))); // fixed64 cut off
    bothRefuse(oneScope(spanFields(attribute('k', [...tag(3, 0), ...Array(10).fill(0xff), 1]))));
    // a sub-message longer than its parent
    bothRefuse(Buffer.from(ld(1, [...tag(2, 2), 50, ...ld(2, spanFields())])));
  });

  it('never throws and agrees with protobufjs on every truncation of a valid body', () => {
    const counts: Record<Outcome, number> = { equal: 0, 'both refused': 0, stricter: 0 };
    const body = encodeBatch(agentRun(3, 1, 1n));
    for (let length = 0; length <= body.length; length++) counts[agree(body.subarray(0, length))]++;
    // a span cut anywhere, in messages whose lengths are framed to fit it
    const spanType = ExportTraceServiceRequest.root.lookupType('opentelemetry.proto.trace.v1.Span');
    const spanBytes = [...spanType.encode(spanType.fromObject(CUT_SPAN)).finish()];
    for (let length = 0; length <= spanBytes.length; length++) {
      counts[agree(oneScope(spanBytes.slice(0, length)))]++;
    }
    expect(counts.equal).toBeGreaterThan(10);
    expect(counts['both refused']).toBeGreaterThan(1000);
  });

  it('never throws and agrees with protobufjs on mutated and random bodies', () => {
    const random = prng(22);
    const byte = () => Math.floor(random() * 256);
    const counts: Record<Outcome, number> = { equal: 0, 'both refused': 0, stricter: 0 };
    const bases = [
      encodeBatch(agentRun(4, 1, 1_780_000_000_000_000_000n)),
      oneScope(spanFields(UNKNOWN, attribute('v', ld(5, ld(1, vfield(3, -5n)))))),
      encode({ resourceSpans: [{ scopeSpans: [{ spans: RICH_SPANS.slice(1, 12) }] }] }),
    ];
    for (let i = 0; i < 4000; i++) {
      const bytes = [...bases[i % bases.length]!];
      const edits = 1 + Math.floor(random() * 4);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(random() * bytes.length);
        const op = random();
        if (op < 0.5) bytes[at] = byte();
        else if (op < 0.75) bytes.splice(at, 0, byte());
        else bytes.splice(at, 1);
      }
      counts[agree(Buffer.from(bytes))]++;
    }
    for (let i = 0; i < 3000; i++) {
      const length = Math.floor(random() * 64);
      counts[agree(Buffer.from(Array.from({ length }, byte)))]++;
    }
    expect(counts.equal).toBeGreaterThan(500);
    expect(counts['both refused']).toBeGreaterThan(500);
  });

  it('is stricter only where documented', () => {
    // a string overrunning its message: protobufjs's BufferReader cuts it short
    const overrun = Buffer.from(ld(1, ld(2, ld(1, [...tag(1, 2), 9, 0x61]))));
    expect(protobufjsDecode(overrun, 'protobuf').ok).toBe(true);
    expect(decodeTraceWire(overrun).ok).toBe(false);
    expect(agree(overrun)).toBe('stricter');
    // an int64 varint whose 4th byte still continues at the end of its AnyValue
    const cut = oneScope(spanFields(attribute('k', [...tag(3, 0), 0x81, 0x81, 0x81, 0x81])));
    expect(protobufjsDecode(cut, 'protobuf').ok).toBe(true);
    expect(agree(cut)).toBe('stricter');
  });
});
