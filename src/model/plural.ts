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
 * "1 tool result", "1,204 tool results", "3 entries" (`plural(3, 'entry', 'entries')`).
 * `format` writes the number (default `toLocaleString('en-US')`: "1,204").
 */
export function plural(
  count: number,
  singular: string,
  pluralForm = `${singular}s`,
  format: (count: number) => string = (n) => n.toLocaleString('en-US'),
): string {
  return `${format(count)} ${pluralWord(count, singular, pluralForm)}`;
}
