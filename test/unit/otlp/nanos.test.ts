import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { nanosString } from '../../../src/otlp/values.ts';

describe('nanosString', () => {
  it('keeps protobuf fixed64 times below 2^63 exactly and refuses larger ones', () => {
    // what protobufjs hands the decoder for a fixed64 field
    const long = (text: string) =>
      (protobuf.util.Long as unknown as { fromString(t: string, u: boolean): object }).fromString(
        text,
        true,
      );
    expect(nanosString(long('0'))).toBe('0');
    expect(nanosString(long('1764547200123456789'))).toBe('1764547200123456789');
    expect(nanosString(long('9223372036854775807'))).toBe('9223372036854775807');
    expect(nanosString(long('9223372036854775808'))).toBeUndefined();
    expect(nanosString(long('18446744073709551615'))).toBeUndefined();
  });

  it('reads OTLP/JSON strings and numbers the same way', () => {
    expect(nanosString('1764547200123456789')).toBe('1764547200123456789');
    expect(nanosString('0001')).toBe('1');
    expect(nanosString('9223372036854775808')).toBeUndefined();
    expect(nanosString('-1')).toBeUndefined();
    expect(nanosString(12.7)).toBe('12');
    expect(nanosString('')).toBe('0');
  });
});
