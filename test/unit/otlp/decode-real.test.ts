/** The real third-party OTLP JSON files decode completely, ids and timestamps exact. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeTraceJsonFile } from '../../../src/otlp/decode.ts';

const REAL = fileURLToPath(new URL('../../fixtures/real/', import.meta.url));

describe('decodeTraceJsonFile on real exports', () => {
  it('reads a Tempo export (batches, instrumentationLibrarySpans, bare-number nanos) without losing digits', () => {
    const result = decodeTraceJsonFile(
      readFileSync(`${REAL}tempo-export_genai_kagent.json`, 'utf8'),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.items).toHaveLength(86);
    expect(result.value.rejected).toEqual([]);
    const first = result.value.items[0]!;
    expect(first.traceId).toBe('dd547580319ab0312cee07f1def50dad');
    expect(first.startTimeUnixNano).toBe('1777555053780274700');
    expect(first.endTimeUnixNano).toBe('1777555053781172000');
    expect(first.kind).toBe(2);
    expect(first.scope.name).toBe('go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp');
  });

  it('reads an array of request bodies with base64 ids (the protobuf JSON mapping)', () => {
    const result = decodeTraceJsonFile(
      readFileSync(`${REAL}otlp-json_openinference_openai.json`, 'utf8'),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.items).toHaveLength(8);
    expect(result.value.items[0]!.traceId).toBe(
      Buffer.from('uoqwG/CGgzyYnOKnop7uMQ==', 'base64').toString('hex'),
    );
    expect(result.value.items[0]!.statusCode).toBe(1);
  });

  it('reads JSON lines and reports the first bad line', () => {
    const line = JSON.stringify({ resourceSpans: [] });
    expect(decodeTraceJsonFile(`${line}\n${line}\n`).ok).toBe(true);
    expect(decodeTraceJsonFile(`${line}\n{oops\n`)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^line 2: invalid JSON/),
    });
  });
});
