/**
 * The colour bands of a usage share (a call's context over its window), from the workspace's
 * knobs: amber from `usageThreshold` (where context_too_full fires), red from `usageCritical`
 * (where it turns critical), dim below 60 % (or below the threshold when that is lower), plain
 * between. With the default knobs these are the status line's 60 / 70 / 85 %
 * ({@link DEFAULT_USAGE_BANDS} in ./usage-rules.ts, the one place the levels are defined). The
 * run view's strip draws its bars and lines with them (src/api/routes/strip.ts sends them), and
 * GET /api/agent-knobs hands them to the status line.
 */
import type { Thresholds } from './thresholds.ts';
import { DIM_BELOW, type UsageBands } from './usage-rules.ts';

export { DIM_BELOW, usageLevelIn, type UsageBands, type UsageLevel } from './usage-rules.ts';

/** The bands of a workspace's knobs. */
export function usageBands(
  thresholds: Pick<Thresholds, 'usageThreshold' | 'usageCritical'>,
): UsageBands {
  const amberFrom = thresholds.usageThreshold;
  const redFrom = Math.max(thresholds.usageCritical, amberFrom);
  return { dimBelow: Math.min(DIM_BELOW, amberFrom), amberFrom, redFrom };
}
