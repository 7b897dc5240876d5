/**
 * Per-workspace context windows for models matching a glob (DESIGN §5): the type, its bounds
 * (one place for the API, `rotscope analyze --window` and the console) and the reader of what
 * was stored.
 */

/** A context window for models whose id matches a glob (`*` any run, `?` one char; case-insensitive). */
export interface WindowOverride {
  model: string;
  /** Window size in tokens. */
  window: number;
}

/** Largest window an override may set (tokens). */
export const MAX_OVERRIDE_WINDOW = 100_000_000;
/** Longest model glob an override may hold (characters). */
export const MAX_OVERRIDE_GLOB_LENGTH = 200;

/** Whether `window` is a window an override may set: a whole number of tokens, 1..MAX. */
export function isOverrideWindow(window: number): boolean {
  return Number.isInteger(window) && window > 0 && window <= MAX_OVERRIDE_WINDOW;
}

/** The valid overrides of a stored value (anything else stored there is skipped, never thrown). */
export function readWindowOverrides(stored: unknown): WindowOverride[] {
  if (!Array.isArray(stored)) return [];
  return stored.flatMap((entry: unknown) => {
    if (typeof entry !== 'object' || entry === null) return [];
    const { model, window } = entry as Record<string, unknown>;
    return typeof model === 'string' && typeof window === 'number' && isOverrideWindow(window)
      ? [{ model, window }]
      : [];
  });
}
