/** Value guards for typed columns, shared by every insert. */

/** int4 columns: a producer's absurd token count must not fail the whole batch. */
export function int4(value: number | null | undefined): number | null {
  if (value === null || value === undefined || !Number.isFinite(value)) return null;
  return Math.max(-2_147_483_648, Math.min(2_147_483_647, Math.round(value)));
}
