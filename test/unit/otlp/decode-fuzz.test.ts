/** Property tests: the decoder never throws on any input, whatever the bytes. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeLogs, decodeTraceJsonFile, decodeTraces } from '../../../src/otlp/decode.ts';
import { jsonRequest, jsonSpan, protobufRequest } from '../../helpers/otlp-bodies.ts';

const validProto = protobufRequest([jsonSpan(), jsonSpan(), jsonSpan()]);
const validJson = JSON.stringify(jsonRequest([jsonSpan(), jsonSpan()]));

/** Flips, inserts or deletes bytes of a valid payload. */
const mutated = (base: Uint8Array) =>
  fc
    .array(
      fc.record({
        at: fc.nat({ max: base.length - 1 }),
        op: fc.constantFrom('flip', 'insert', 'delete'),
        byte: fc.integer({ min: 0, max: 255 }),
      }),
      { minLength: 1, maxLength: 8 },
    )
    .map((edits) => {
      const bytes = [...base];
      for (const edit of edits) {
        const at = Math.min(edit.at, Math.max(bytes.length - 1, 0));
        if (edit.op === 'flip') bytes[at] = (bytes[at] ?? 0) ^ edit.byte;
        else if (edit.op === 'insert') bytes.splice(at, 0, edit.byte);
        else bytes.splice(at, 1);
      }
      return Uint8Array.from(bytes);
    });

describe('decodeTraces / decodeLogs', () => {
  it('never throw on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), (bytes) => {
        for (const encoding of ['protobuf', 'json'] as const) {
          const traces = decodeTraces(bytes, encoding);
          const logs = decodeLogs(bytes, encoding);
          expect(typeof traces.ok).toBe('boolean');
          expect(typeof logs.ok).toBe('boolean');
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('never throw on mutated valid protobuf, and every span they return has valid ids', () => {
    fc.assert(
      fc.property(mutated(validProto), (bytes) => {
        const result = decodeTraces(bytes, 'protobuf');
        if (result.ok) {
          for (const span of result.value.items) {
            expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
            expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
            expect(span.startTimeUnixNano).toMatch(/^\d+$/);
          }
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it('never throw on mutated valid JSON or on arbitrary JSON values', () => {
    fc.assert(
      fc.property(mutated(Buffer.from(validJson)), (bytes) => {
        decodeTraces(bytes, 'json');
        decodeTraceJsonFile(Buffer.from(bytes).toString('utf8'));
      }),
      { numRuns: 1_000 },
    );
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify({
          resourceSpans: [{ scopeSpans: [{ spans: [value] }] }],
          value,
        });
        expect(decodeTraces(text, 'json').ok).toBe(true);
        decodeTraces(JSON.stringify(value), 'json');
        decodeLogs(
          JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: [value] }] }] }),
          'json',
        );
      }),
      { numRuns: 1_000 },
    );
  });
});
