/**
 * Decoding and normalizing in slices (issue 33, src/model/slices.ts): the sliced variants give
 * exactly what the synchronous ones give, pausing after every span (`new Slices(0)`) or not at
 * all, and a large batch does give the event loop turns while a small one does not.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { agentRun, encodeBatch, type BenchSpan } from '../../../bench/genai-spans.ts';
import { normalizeSpans, normalizeSpansSliced } from '../../../src/ingest/index.ts';
import { Slices } from '../../../src/model/slices.ts';
import type { Span } from '../../../src/model/telemetry.ts';
import { decodeTraces, decodeTracesSliced } from '../../../src/otlp/decode.ts';
import { decodeTraceWire, decodeTraceWireSliced } from '../../../src/otlp/trace-wire.ts';
import { jsonSpan, protobufRequest } from '../../helpers/otlp-bodies.ts';
import { CTX, NO_CONTENT } from '../ingest/helpers.ts';

const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));

function readBody(file: string): Buffer {
  const raw = readFileSync(FIXTURES + file);
  if (file.endsWith('.br')) return brotliDecompressSync(raw);
  if (file.endsWith('.gz')) return gunzipSync(raw);
  return raw;
}

const PROTOBUF_FIXTURES = (readdirSync(FIXTURES, { recursive: true }) as string[])
  .filter((f) => /traces[^/]*\.pb(\.br|\.gz)?$/.test(f))
  .sort();

function benchBody(spans: number, content = true): Buffer {
  const base = 1_700_000_000_000_000_000n;
  const all: BenchSpan[] = [];
  for (let run = 0; all.length < spans; run++)
    all.push(...agentRun(run, 10, base + BigInt(run) * 1_000_000_000n, { content }));
  all.length = spans;
  return encodeBatch(all);
}

/** Both sliced paths (pausing after every span, and with the default slices) match the sync one. */
async function sameDecode(body: Buffer) {
  const expected = decodeTraceWire(body);
  expect(await decodeTraceWireSliced(body, new Slices(0))).toStrictEqual(expected);
  expect(await decodeTraceWireSliced(body)).toStrictEqual(expected);
  expect(await decodeTracesSliced(body, 'protobuf')).toStrictEqual(expected);
  return expected;
}

/** Whether a setImmediate callback scheduled before `work` starts runs before it ends. */
async function yieldsDuring(work: () => Promise<unknown>): Promise<boolean> {
  let ran = false;
  setImmediate(() => (ran = true));
  await work();
  const yielded = ran;
  await new Promise((resolve) => setImmediate(resolve));
  return yielded;
}

describe('decodeTraceWireSliced', () => {
  it('decodes every protobuf fixture as decodeTraceWire does', async () => {
    expect(PROTOBUF_FIXTURES.length).toBeGreaterThan(10);
    for (const file of PROTOBUF_FIXTURES) expect((await sameDecode(readBody(file))).ok).toBe(true);
  });

  it('decodes a bench batch, spans with rejections and an empty body as decodeTraceWire does', async () => {
    expect(await sameDecode(benchBody(2_000))).toMatchObject({ ok: true });
    const invalid = protobufRequest([
      jsonSpan({ name: 'ok' }),
      jsonSpan({ name: 'no id', spanId: '' }),
      jsonSpan({ name: 'ok too' }),
    ]);
    const decoded = await sameDecode(invalid);
    expect(decoded.ok && [decoded.value.items.length, decoded.value.rejected.length]).toEqual([
      2, 1,
    ]);
    expect(await sameDecode(Buffer.alloc(0))).toStrictEqual({
      ok: true,
      value: { items: [], rejected: [] },
    });
  });

  it('refuses a body it cannot read, with the same reason, after pausing or not', async () => {
    const body = benchBody(200);
    for (const cut of [body.subarray(0, body.length - 7), Buffer.from([0x0a, 0xff, 0xff])]) {
      const expected = decodeTraceWire(cut);
      expect(expected.ok).toBe(false);
      expect(await decodeTraceWireSliced(cut, new Slices(0))).toStrictEqual(expected);
      expect(await decodeTraceWireSliced(cut)).toStrictEqual(expected);
    }
  });

  it('gives the event loop a turn once a slice is spent, and none within one', async () => {
    const body = benchBody(300, false);
    expect(await yieldsDuring(() => decodeTraceWireSliced(body, new Slices(0)))).toBe(true);
    expect(await yieldsDuring(() => decodeTraceWireSliced(body, new Slices(60_000)))).toBe(false);
    // JSON is read in one piece
    expect(await yieldsDuring(() => decodeTracesSliced(Buffer.from('{}'), 'json'))).toBe(false);
  });
});

describe('normalizeSpansSliced', () => {
  const spansOf = (body: Buffer): Span[] => {
    const decoded = decodeTraces(body, 'protobuf');
    if (!decoded.ok) throw new Error(decoded.reason);
    return decoded.value.items;
  };

  it('normalizes as normalizeSpans does, with content and without', async () => {
    const bodies = [benchBody(1_000), ...PROTOBUF_FIXTURES.map(readBody)];
    for (const body of bodies) {
      const spans = spansOf(body);
      for (const ctx of [CTX, NO_CONTENT]) {
        const expected = normalizeSpans(spans, ctx);
        expect(await normalizeSpansSliced(spans, ctx, new Slices(0))).toStrictEqual(expected);
        expect(await normalizeSpansSliced(spans, ctx)).toStrictEqual(expected);
      }
    }
  });

  it('gives the event loop a turn once a slice is spent, and none within one', async () => {
    const spans = spansOf(benchBody(300, false));
    expect(await yieldsDuring(() => normalizeSpansSliced(spans, CTX, new Slices(0)))).toBe(true);
    expect(await yieldsDuring(() => normalizeSpansSliced(spans, CTX, new Slices(60_000)))).toBe(
      false,
    );
  });
});
