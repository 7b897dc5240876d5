/** Values that would not fit their columns are read as unspecified instead of failing the batch. */
import { describe, expect, it } from 'vitest';
import { decodeLogs, decodeTraces } from '../../../src/otlp/decode.ts';
import { jsonRequest, jsonSpan } from '../../helpers/otlp-bodies.ts';

describe('decode', () => {
  it('reads unknown or out-of-range enums as 0 and known names as their numbers', () => {
    const spans = [
      { ...jsonSpan(), kind: 99_999_999, status: { code: 70_000 } },
      { ...jsonSpan(), kind: 'SPAN_KIND_CONSUMER', status: { code: 'STATUS_CODE_ERROR' } },
      { ...jsonSpan(), kind: -3 },
    ];
    const result = decodeTraces(JSON.stringify(jsonRequest(spans)), 'json');
    expect(result.ok && result.value.items.map((s) => [s.kind, s.statusCode])).toEqual([
      [0, 0],
      [5, 2],
      [0, 0],
    ]);
  });

  it('reads log severity names and refuses nothing for an odd number', () => {
    const logs = [
      { timeUnixNano: '1', severityNumber: 'SEVERITY_NUMBER_WARN', body: { stringValue: 'a' } },
      { timeUnixNano: '2', severityNumber: 1_000_000, body: { stringValue: 'b' } },
    ];
    const result = decodeLogs(
      JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: logs }] }] }),
      'json',
    );
    expect(result.ok && result.value.items.map((l) => l.severityNumber)).toEqual([13, 0]);
  });

  it('keeps an attribute named __proto__ an own attribute in JSON traces and logs (issue 33)', () => {
    const evil = {
      kvlistValue: {
        values: [
          { key: 'gen_ai.request.model', value: { stringValue: 'evil' } },
          { key: 'gen_ai.usage.input_tokens', value: { intValue: '777777' } },
        ],
      },
    };
    const plain = jsonSpan();
    const span = { ...plain, attributes: [...plain.attributes, { key: '__proto__', value: evil }] };
    const traces = decodeTraces(JSON.stringify(jsonRequest([span])), 'json');
    const attrs = traces.ok ? traces.value.items[0]!.attributes : {};
    expect(Object.getPrototypeOf(attrs)).toBe(Object.prototype);
    expect(attrs['gen_ai.request.model']).toBe('gpt-4o');
    expect(attrs['gen_ai.usage.input_tokens']).toBe(1200);
    expect(Object.keys(attrs)).toContain('__proto__');
    expect(JSON.parse(JSON.stringify(attrs))['__proto__']).toEqual({
      'gen_ai.request.model': 'evil',
      'gen_ai.usage.input_tokens': 777777,
    });

    const body = { kvlistValue: { values: [{ key: '__proto__', value: evil }] } };
    const logs = decodeLogs(
      JSON.stringify({
        resourceLogs: [{ scopeLogs: [{ logRecords: [{ timeUnixNano: '1', body }] }] }],
      }),
      'json',
    );
    const logBody = (logs.ok ? logs.value.items[0]!.body : null) as Record<string, unknown>;
    expect(Object.getPrototypeOf(logBody)).toBe(Object.prototype);
    expect(logBody['gen_ai.request.model']).toBeUndefined();
    expect(Object.keys(logBody)).toEqual(['__proto__']);
  });
});
