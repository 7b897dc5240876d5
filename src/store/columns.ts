/** Value guards for typed columns, shared by every insert. */

/** int4 columns: a producer's absurd token count must not fail the whole batch. */
export function int4(value: number | null | undefined): number | null {
  if (value === null || value === undefined || !Number.isFinite(value)) return null;
  return Math.max(-2_147_483_648, Math.min(2_147_483_647, Math.round(value)));
}

/**
 * Token counts (bigint columns, migration 0050): kept exactly. Ingest refuses a count that is
 * negative, fractional or past 2^53 span by span, so only a count no JavaScript number holds
 * exactly could reach here; it is stored as unknown rather than rounded.
 */
export function int8Count(value: number | null | undefined): number | null {
  if (value === null || value === undefined || !Number.isSafeInteger(value)) return null;
  return value;
}

/** A token count as read back (int8 columns are read as decimal strings on both backends). */
export function countOf(value: string | number | null | undefined): number | null {
  return value === null || value === undefined ? null : Number(value);
}
