/**
 * The knobs of the Context rot alert (DESIGN §6, §8): ./threshold-table.ts gives each threshold
 * its unit (so its kind, a ratio 0..1 or a count ≥ 1), its default and its meaning; the zod
 * schema, the defaults and the lists below are derived from it. The API
 * (`PUT /api/alerts/context-rot`) and the CLI (`rotscope analyze` flags) validate with
 * {@link checkThresholds}, so both accept the same values and say the same thing about the rest.
 */
import { z } from 'zod';
import {
  KIND_RANGE as RANGE,
  THRESHOLD_KEYS,
  THRESHOLD_TABLE as TABLE,
  thresholdKind,
  type ThresholdKind as Kind,
} from './threshold-table.ts';
import type { ThresholdKey } from './vocabulary.ts';

export type { ThresholdKey };

/** The per-workspace knobs of the Context rot alert. Ratios are 0..1, counts whole and ≥ 1. */
export type Thresholds = Record<ThresholdKey, number>;

/** Every threshold, in the order of the table (and of the objects built from it). */
export { THRESHOLD_KEYS };
const keysOf = (kind: Kind) => THRESHOLD_KEYS.filter((key) => thresholdKind(key) === kind);

/** The thresholds that are ratios (0..1). */
export const RATIO_THRESHOLDS: readonly ThresholdKey[] = Object.freeze(keysOf('ratio'));

/** The thresholds that are counts (whole numbers ≥ 1). */
export const COUNT_THRESHOLDS: readonly ThresholdKey[] = Object.freeze(keysOf('count'));

export const DEFAULT_THRESHOLDS: Readonly<Thresholds> = Object.freeze(
  Object.fromEntries(THRESHOLD_KEYS.map((key) => [key, TABLE[key].default])) as Thresholds,
);

/** What a problem with a threshold of each kind says (after its name). */
const RULE: Record<Kind, string> = {
  ratio: 'must be a ratio between 0 and 1',
  count: 'must be a positive integer',
};

const BOUNDS: Record<Kind, z.ZodNumber> = {
  ratio: z
    .number({ error: RULE.ratio })
    .min(RANGE.ratio.minimum, RULE.ratio)
    .max(RANGE.ratio.maximum!, RULE.ratio),
  count: z.int({ error: RULE.count }).min(RANGE.count.minimum, RULE.count),
};

const isRatio = (v: unknown): v is number => typeof v === 'number' && v >= 0 && v <= 1;

/**
 * A complete set of thresholds (unknown keys are stripped): ratios finite and within 0..1,
 * counts safe integers ≥ 1, and `usageCritical` ≥ `usageThreshold`.
 */
export const thresholdsSchema = z
  .object(
    Object.fromEntries(
      THRESHOLD_KEYS.map((key) => [key, BOUNDS[thresholdKind(key)].describe(TABLE[key].doc)]),
    ) as Record<ThresholdKey, z.ZodNumber>,
  )
  .refine(
    (t) =>
      !isRatio(t.usageThreshold) ||
      !isRatio(t.usageCritical) ||
      t.usageCritical >= t.usageThreshold,
    { path: ['usageCritical'], params: { rule: 'order' } },
  );

/**
 * Every threshold as a plain number with its meaning, its range documented but not checked:
 * the shape the API returns and accepts back. The bounds are {@link checkThresholds}'s, so a
 * request with several bad values hears about all of them at once, in its words.
 */
export const thresholdValuesSchema = z.object(
  Object.fromEntries(
    THRESHOLD_KEYS.map((key) => {
      const kind = thresholdKind(key);
      const { doc } = TABLE[key];
      const range = kind === 'count' ? { ...RANGE.count, multipleOf: 1 } : RANGE.ratio;
      return [key, z.number().meta({ description: doc, ...range })];
    }),
  ) as Record<ThresholdKey, z.ZodNumber>,
);

/** How the caller names a threshold and shows the value it was given, in error messages. */
export interface ThresholdNaming {
  /** E.g. `thresholds.usageCritical` (API) or `--usage-critical` (CLI). */
  name: (key: ThresholdKey) => string;
  /** The value as the user gave it, e.g. `1.5` or `"abc"`. */
  shown: (key: ThresholdKey) => string;
}

/**
 * Validates a complete set of thresholds. Returns every problem at once, each a sentence that
 * starts with the threshold's name, e.g. `thresholds.toolShare must be a ratio between 0 and 1
 * (got 1.5)`, in {@link THRESHOLD_KEYS} order, the usageCritical ≥ usageThreshold rule last
 * (checked only when both are valid ratios).
 */
export function checkThresholds(
  values: Readonly<Record<ThresholdKey, unknown>>,
  naming: ThresholdNaming,
): { ok: true; thresholds: Thresholds } | { ok: false; errors: string[]; keys: ThresholdKey[] } {
  const parsed = thresholdsSchema.safeParse(values);
  if (parsed.success) return { ok: true, thresholds: parsed.data };
  const { name, shown } = naming;
  // each error with the knob it is about (the usageCritical ≥ usageThreshold rule: usageCritical)
  const keys = parsed.error.issues.map((issue) =>
    issue.code === 'custom' ? 'usageCritical' : (issue.path[0] as ThresholdKey),
  );
  const errors = parsed.error.issues.map((issue, i) => {
    const key = keys[i]!;
    if (issue.code === 'custom') {
      return `${name('usageCritical')} (${shown('usageCritical')}) must be at least ${name('usageThreshold')} (${shown('usageThreshold')})`;
    }
    return `${name(key)} ${RULE[thresholdKind(key)]} (got ${shown(key)})`;
  });
  return { ok: false, errors, keys };
}
