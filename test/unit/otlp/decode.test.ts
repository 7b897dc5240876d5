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
});
