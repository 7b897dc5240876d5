import { describe, expect, it } from 'vitest';
import { CopyWriter, type CopyType } from '../../../src/store/copy-binary.ts';

const TYPES: CopyType[] = ['text', 'jsonb', 'int8', 'jsonb'];

describe('CopyWriter', () => {
  it('writes an object shared by several rows as the same bytes as equal copies of it', () => {
    const resource = { 'service.name': 'agent', 'host.name': 'h\u00e9' };
    const shared = new CopyWriter(TYPES, 64);
    const copies = new CopyWriter(TYPES, 64);
    for (let i = 0; i < 50; i++) {
      const attributes = { i, text: 'x'.repeat(i) };
      shared.row([`s${i}`, resource, String(i), i % 3 === 0 ? null : attributes]);
      copies.row([`s${i}`, { ...resource }, String(i), i % 3 === 0 ? null : { ...attributes }]);
    }
    const a = shared.finish();
    expect(a.equals(copies.finish())).toBe(true);
    // the header, and the resource's JSON once per row
    expect(a.subarray(0, 11).toString('latin1')).toBe('PGCOPY\n\xff\r\n\0');
    const json = Buffer.from(JSON.stringify(resource));
    let count = 0;
    for (let at = a.indexOf(json); at !== -1; at = a.indexOf(json, at + 1)) count++;
    expect(count).toBe(50);
  });
});

describe('CopyWriter float8', () => {
  it('writes a double as its 8 big-endian IEEE 754 bytes, and null as NULL', () => {
    const writer = new CopyWriter(['float8', 'float8'], 64);
    writer.row([0.0063216, null]);
    const data = writer.finish();
    // header (11 + 8), field count (2), length 8, the double, length -1 (NULL), trailer
    const at = 19 + 2;
    expect(data.readInt32BE(at)).toBe(8);
    expect(data.readDoubleBE(at + 4)).toBe(0.0063216);
    expect(data.readInt32BE(at + 12)).toBe(-1);
    expect(data.readInt16BE(at + 16)).toBe(-1);
    expect(data.length).toBe(at + 18);
  });
});
