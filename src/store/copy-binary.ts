/**
 * PostgreSQL's binary COPY format (the COPY docs, "Binary Format"): a header, then per row a
 * field count and each field as a length and its bytes in the type's binary send format, then
 * a trailer. No escaping and no text parsing on either side, which is what makes it the
 * cheapest way to hand rows to the database.
 */

/** The column types the ingest path copies. */
export type CopyType = 'text' | 'int2' | 'int4' | 'int8' | 'float8' | 'bool' | 'jsonb';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** A growable buffer of COPY binary data. */
export class CopyWriter {
  #buf: Buffer;
  #at = 0;
  readonly #types: readonly CopyType[];
  /**
   * Per column, the last object written as jsonb and where its field lies in the buffer: rows
   * that share one object (every span of a batch holds its resource's) copy the bytes instead
   * of stringifying and encoding it again.
   */
  readonly #lastObject: Array<{ value: object; start: number; end: number } | undefined> = [];

  constructor(types: readonly CopyType[], sizeHint = 64 * 1024) {
    this.#types = types;
    this.#buf = Buffer.allocUnsafe(Math.max(sizeHint, 64));
    this.#reserve(SIGNATURE.length + 8);
    SIGNATURE.copy(this.#buf, this.#at);
    this.#at += SIGNATURE.length;
    this.#buf.writeInt32BE(0, this.#at); // flags: no OIDs
    this.#buf.writeInt32BE(0, this.#at + 4); // header extension length
    this.#at += 8;
  }

  #reserve(bytes: number): void {
    if (this.#at + bytes <= this.#buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#at + bytes));
    this.#buf.copy(next, 0, 0, this.#at);
    this.#buf = next;
  }

  /**
   * Appends one row; values in the order of the types. null and undefined are NULL; int8
   * takes decimal strings, numbers or bigints; float8 a number; jsonb takes a JSON text or a value to stringify.
   */
  row(values: readonly unknown[]): void {
    const types = this.#types;
    this.#reserve(2);
    this.#buf.writeInt16BE(types.length, this.#at);
    this.#at += 2;
    for (let i = 0; i < types.length; i++) this.#field(types[i]!, values[i], i);
  }

  #field(type: CopyType, value: unknown, column: number): void {
    if (value === null || value === undefined) {
      this.#reserve(4);
      this.#buf.writeInt32BE(-1, this.#at);
      this.#at += 4;
      return;
    }
    switch (type) {
      case 'text':
        return this.#string(String(value), false);
      case 'jsonb':
        if (typeof value === 'object') return this.#jsonbObject(value, column);
        return this.#string(typeof value === 'string' ? value : JSON.stringify(value), true);
      case 'int2':
        this.#reserve(6);
        this.#buf.writeInt32BE(2, this.#at);
        this.#buf.writeInt16BE(Number(value), this.#at + 4);
        this.#at += 6;
        return;
      case 'int4':
        this.#reserve(8);
        this.#buf.writeInt32BE(4, this.#at);
        this.#buf.writeInt32BE(Number(value), this.#at + 4);
        this.#at += 8;
        return;
      case 'int8':
        this.#reserve(12);
        this.#buf.writeInt32BE(8, this.#at);
        this.#buf.writeBigInt64BE(BigInt(value as string | number | bigint), this.#at + 4);
        this.#at += 12;
        return;
      case 'float8':
        this.#reserve(12);
        this.#buf.writeInt32BE(8, this.#at);
        this.#buf.writeDoubleBE(Number(value), this.#at + 4);
        this.#at += 12;
        return;
      case 'bool':
        this.#reserve(5);
        this.#buf.writeInt32BE(1, this.#at);
        this.#buf.writeUInt8(value ? 1 : 0, this.#at + 4);
        this.#at += 5;
        return;
    }
  }

  #jsonbObject(value: object, column: number): void {
    const last = this.#lastObject[column];
    if (last?.value === value) {
      const length = last.end - last.start;
      this.#reserve(length);
      this.#buf.copy(this.#buf, this.#at, last.start, last.end);
      this.#at += length;
      return;
    }
    const start = this.#at;
    this.#string(JSON.stringify(value), true);
    this.#lastObject[column] = { value, start, end: this.#at };
  }

  /** text: the UTF-8 bytes; jsonb: a version byte (1) and the JSON text. */
  #string(text: string, jsonb: boolean): void {
    const max = text.length * 3 + 5;
    this.#reserve(max);
    const start = this.#at + 4;
    let at = start;
    if (jsonb) this.#buf[at++] = 1;
    at += this.#buf.write(text, at, 'utf8');
    this.#buf.writeInt32BE(at - start, this.#at);
    this.#at = at;
  }

  /** The data with its trailer; the writer must not be used afterwards. */
  finish(): Buffer {
    this.#reserve(2);
    this.#buf.writeInt16BE(-1, this.#at);
    this.#at += 2;
    return this.#buf.subarray(0, this.#at);
  }
}
