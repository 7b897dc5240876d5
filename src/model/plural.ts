/**
 * A count and its noun, singular for exactly one: "1 compaction", "2 compactions", "0 calls".
 * One helper for the console, the CLI and the findings' prose, so no text says "1 compactions"
 * again. Pure; the number is written with thousands separators unless `format` says otherwise.
 */

/** The noun for `count`: `singular` for exactly 1, else `pluralForm` (default `singular + 's'`). */
export function pluralWord(count: number, singular: string, pluralForm = `${singular}s`): string {
  return count === 1 ? singular : pluralForm;
}

/**
 * A number's text with a comma before each group of three digits that ends a run of digits:
 * "1204" → "1,204", "-1204" → "-1,204" (findings' prose and the count of `plural`).
 */
export function groupThousands(text: string): string {
  return text.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * A number as `toLocaleString('en-US')` writes it ("1,204"); whole numbers without asking ICU,
 * which costs microseconds a call (findings' prose writes counts at every report, issue 39).
 */
function enUs(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString('en-US');
  return groupThousands(String(n));
}

/**
 * "1 tool result", "1,204 tool results", "3 entries" (`plural(3, 'entry', 'entries')`).
 * `format` writes the number (default as `toLocaleString('en-US')`: "1,204").
 */
export function plural(
  count: number,
  singular: string,
  pluralForm = `${singular}s`,
  format: (count: number) => string = enUs,
): string {
  return `${format(count)} ${pluralWord(count, singular, pluralForm)}`;
}
