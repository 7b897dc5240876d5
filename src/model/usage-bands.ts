/**
 * The colour bands of a usage share (a call's context over its window), from the workspace's
 * knobs: amber from `usageThreshold` (where context_too_full fires), red from `usageCritical`
 * (where it turns critical), dim below 60 % (or below the threshold when that is lower), plain
 * between. With the default knobs these are the status line's 60 / 70 / 85 %
 * (src/cli/statusline.ts, which runs without the store and so uses the defaults). The run
 * view's strip draws its bars and lines with them (src/api/routes/strip.ts sends them).
 */
import type { Thresholds } from './thresholds.ts';

/** Below this share a call is dim: nothing to look at yet. */
export const DIM_BELOW = 0.6;

export interface UsageBands {
  /** Dim below this share. */
  dimBelow: number;
  /** Amber from this share (the workspace's usageThreshold). */
  amberFrom: number;
  /** Red from this share (the workspace's usageCritical). */
  redFrom: number;
}

export type UsageLevel = 'dim' | 'normal' | 'amber' | 'red';

/** The bands of a workspace's knobs. */
export function usageBands(
  thresholds: Pick<Thresholds, 'usageThreshold' | 'usageCritical'>,
): UsageBands {
  const amberFrom = thresholds.usageThreshold;
  const redFrom = Math.max(thresholds.usageCritical, amberFrom);
  return { dimBelow: Math.min(DIM_BELOW, amberFrom), amberFrom, redFrom };
}

/** The level of a share in `bands`. */
export function usageLevelIn(share: number, bands: UsageBands): UsageLevel {
  if (share >= bands.redFrom) return 'red';
  if (share >= bands.amberFrom) return 'amber';
  if (share < bands.dimBelow) return 'dim';
  return 'normal';
}
