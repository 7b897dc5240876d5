/**
 * The one cursor of every JSON API list (`{ items, next }` and `?cursor=`, DESIGN §8). To a
 * client a cursor is opaque; inside it is base64url of a JSON array holding the sort key of a
 * page's last item, one string per part. The store lists take and return that key; each route
 * names its parts' kinds, and decoding checks every part against its kind and range, so a
 * cursor that decodes is one the database accepts, and any other is the same 400 on every
 * list.
 */
import { BadRequestError, isStorableText } from './validation.ts';

/**
 * What one part of a sort key holds:
 * - `bigint`: a non-negative integer that fits PostgreSQL bigint (ids, nanosecond times);
 * - `micros`: microseconds since the Unix epoch, up to the end of year 9999 (a timestamptz);
 * - `text`: any text PostgreSQL stores (no NUL, no lone UTF-16 surrogate).
 */
export type CursorPart = 'bigint' | 'micros' | 'text';

/** A decoded sort key: one string per part. */
export type CursorKey<Parts extends readonly CursorPart[]> = {
  readonly [I in keyof Parts]: string;
};

/** Longest cursor accepted (characters). */
export const MAX_CURSOR_LENGTH = 4096;

const INT8_MAX = 9_223_372_036_854_775_807n;
/** 9999-12-31T23:59:59.999999Z in microseconds since the epoch. */
const MAX_MICROS = 253_402_300_799_999_999n;

const PART_MAX: Record<Exclude<CursorPart, 'text'>, bigint> = {
  bigint: INT8_MAX,
  micros: MAX_MICROS,
};

function isPart(kind: CursorPart, value: unknown): value is string {
  if (typeof value !== 'string') return false;
  if (kind === 'text') return isStorableText(value);
  return /^(0|[1-9]\d{0,18})$/.test(value) && BigInt(value) <= PART_MAX[kind];
}

/** The cursor of a sort key. */
export function encodeCursor(key: readonly string[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** The sort key inside a cursor, or undefined when it is not a cursor of a list keyed by `parts`. */
export function decodeCursor<const Parts extends readonly CursorPart[]>(
  cursor: string,
  parts: Parts,
): CursorKey<Parts> | undefined {
  if (cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]*$/.test(cursor)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== parts.length) return undefined;
  if (!parts.every((kind, i) => isPart(kind, value[i]))) return undefined;
  return value as unknown as CursorKey<Parts>;
}

/**
 * A list's `?cursor=`: undefined when absent, its sort key when it is one this API returned
 * for this list, else a 400 naming the parameter.
 */
export function readCursor<const Parts extends readonly CursorPart[]>(
  cursor: string | undefined,
  parts: Parts,
): CursorKey<Parts> | undefined {
  if (cursor === undefined) return undefined;
  const key = decodeCursor(cursor, parts);
  if (!key) throw new BadRequestError('querystring/cursor is not one this API returned');
  return key;
}

/** A store page as the API returns it: the next page's sort key as an opaque cursor. */
export function toPage<Item>(page: { items: Item[]; next: readonly string[] | null }): {
  items: Item[];
  next: string | null;
} {
  return { items: page.items, next: page.next === null ? null : encodeCursor(page.next) };
}
