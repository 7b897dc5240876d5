/**
 * The usage rules written once for everyone who reads an Anthropic usage object, colours a
 * window share or writes it as a percent: ingest (transcripts), the Claude Code status line and
 * guard (compiled alone to CommonJS: this file imports nothing), the server's bands
 * (./usage-bands.ts), the detectors' summaries (src/detectors/shared.ts) and the console
 * (ui/src/format.ts, ui/src/run/strip-model.ts). The SDK (packages/sdk) is a package of its own and keeps its copy of the
 * first rule (packages/sdk/src/provider-shapes.ts); test/unit/model/usage-rules.test.ts holds
 * both to the same cases.
 */

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** Input + cache creation + cache read: everything sent (Anthropic's input excludes cache). */
export function sentTokens(usage: Obj): number {
  return (
    count(usage['input_tokens']) +
    count(usage['cache_creation_input_tokens']) +
    count(usage['cache_read_input_tokens'])
  );
}

/**
 * The entry of an Anthropic usage object whose counts are the context of the call's last
 * sampling: the last `type: "message"` entry of `usage.iterations` when it counts anything (the
 * top level sums a server-side tool loop's iterations, and is all zero on a message Claude Code
 * re-writes after a compaction boundary), else the top level. Null when nothing was counted:
 * an empty context is never sent, so all zero is no measurement.
 */
export function contextUsageEntry(usage: unknown): Obj | null {
  if (!isObj(usage)) return null;
  const iterations = Array.isArray(usage['iterations']) ? usage['iterations'] : [];
  const last = iterations.filter((it) => isObj(it) && it['type'] === 'message').pop();
  if (isObj(last) && sentTokens(last) > 0) return last;
  return sentTokens(usage) > 0 ? usage : null;
}

/** The context size of an Anthropic usage object ({@link contextUsageEntry}), or null. */
export function contextTokensOf(usage: unknown): number | null {
  const entry = contextUsageEntry(usage);
  return entry === null ? null : sentTokens(entry);
}

/**
 * A share as a whole percent, rounded down (0.849 → 84, below an 85% band): the one rule the
 * status line, the detectors' summaries and the console write a share by, so 58,000 of 200,000
 * reads 29% everywhere. The 1e-9 takes back what binary floating point loses (0.29 * 100 is
 * 28.999999999999996); a share of tokens over any window below a billion tokens is never
 * that close below a whole percent.
 */
export function wholePercent(share: number): number {
  return Math.floor(share * 100 + 1e-9);
}

/** The colour bands of a window share: dim below, plain, amber from, red from. */
export interface UsageBands {
  /** Dim below this share. */
  dimBelow: number;
  /** Amber from this share (the workspace's usageThreshold). */
  amberFrom: number;
  /** Red from this share (the workspace's usageCritical). */
  redFrom: number;
}

export type UsageLevel = 'dim' | 'normal' | 'amber' | 'red';

/** Below this share a call is dim: nothing to look at yet. */
export const DIM_BELOW = 0.6;

/** The bands of the default knobs (usageThreshold 0.7, usageCritical 0.85). */
export const DEFAULT_USAGE_BANDS: Readonly<UsageBands> = Object.freeze({
  dimBelow: DIM_BELOW,
  amberFrom: 0.7,
  redFrom: 0.85,
});

/** The level of a share in `bands`. */
export function usageLevelIn(
  share: number,
  bands: Readonly<UsageBands> = DEFAULT_USAGE_BANDS,
): UsageLevel {
  if (share >= bands.redFrom) return 'red';
  if (share >= bands.amberFrom) return 'amber';
  if (share < bands.dimBelow) return 'dim';
  return 'normal';
}
