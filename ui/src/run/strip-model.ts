/**
 * What the strip draws, derived once per strip: which calls are shown (a stream filter), each
 * call's share of its window, and where each call sits on the strip. Plain typed arrays, so a
 * 10,000-call run costs a few small allocations, not 10,000 objects.
 */
import { wholePercent as percentOf } from '../../../src/model/usage-rules.ts';
import { usageLevel } from '../format.ts';
import type { Strip, StripFinding } from './types.ts';

/** `all`, `main` (calls of threads with no agent), `agent:<streamIndex>` or `side`. */
export type StreamFilter = string;

export interface StripModel {
  /** Call indexes shown, in start order. */
  order: Int32Array;
  /** Position of each call in `order`; -1 when filtered out. */
  positionOf: Int32Array;
  /** Each call's usage over its window (NaN when either is unknown). */
  share: Float64Array;
  /** The largest usage of the calls, for scaling calls with no known window. */
  maxContext: number;
}

export function isSideCall(strip: Strip, i: number): boolean {
  return (strip.columns.side[i] ?? -1) >= 0;
}

export function isSubAgent(strip: Strip, i: number): boolean {
  return strip.streams[strip.columns.stream[i] ?? 0]?.agentId != null;
}

function keep(strip: Strip, i: number, filter: StreamFilter): boolean {
  if (filter === 'all') return true;
  if (filter === 'side') return isSideCall(strip, i);
  if (filter === 'main') return !isSubAgent(strip, i) && !isSideCall(strip, i);
  if (filter.startsWith('stream:')) return String(strip.columns.stream[i]) === filter.slice(7);
  return true;
}

export function buildModel(strip: Strip, filter: StreamFilter): StripModel {
  const n = strip.calls;
  const share = new Float64Array(n);
  const positionOf = new Int32Array(n).fill(-1);
  const shown: number[] = [];
  let maxContext = 0;
  const { context, window } = strip.columns;
  for (let i = 0; i < n; i++) {
    const used = context[i] ?? null;
    const size = window[i] ?? null;
    share[i] = used !== null && size !== null && size > 0 ? used / size : Number.NaN;
    if (used !== null && used > maxContext) maxContext = used;
    if (keep(strip, i, filter)) {
      positionOf[i] = shown.length;
      shown.push(i);
    }
  }
  return { order: Int32Array.from(shown), positionOf, share, maxContext };
}

/**
 * The models of the strip's calls that carry token counts but no window: no source knows them,
 * so context_too_full does not judge those calls (the run view says "window unknown").
 */
export function windowUnknownModels(strip: Strip): string[] {
  const { context, window, model } = strip.columns;
  const models = new Set<string>();
  for (let i = 0; i < strip.calls; i++) {
    if ((context[i] ?? null) === null || (window[i] ?? null) !== null) continue;
    const m = model[i] ?? -1;
    models.add(m >= 0 ? (strip.models[m] ?? '(no model)') : '(no model)');
  }
  return [...models].sort();
}

/** The level of a call in the workspace's colour bands (dim for an unknown share). */
export function levelOf(share: number, bands: Strip['bands']): ReturnType<typeof usageLevel> {
  return Number.isNaN(share) ? 'dim' : usageLevel(share, bands);
}

/**
 * A share as the findings and the status line write it: whole percent, rounded down (0.849 is
 * 84%, below an 85% band), by their one rule (src/model/usage-rules.ts), so a number on the strip
 * reads as the finding beside it.
 */
export function wholePercent(share: number): string {
  return Number.isFinite(share) ? `${percentOf(share)}%` : '–';
}

/** Call numbers as the page writes them: `call #4`, `calls #2–#4`, `calls #2, #5`. */
export function callsLabel(calls: readonly number[]): string {
  if (calls.length === 0) return '';
  if (calls.length === 1) return `call #${calls[0]! + 1}`;
  const consecutive = calls.every((c, k) => k === 0 || c === calls[k - 1]! + 1);
  return consecutive
    ? `calls #${calls[0]! + 1}–#${calls[calls.length - 1]! + 1}`
    : `calls ${calls.map((c) => `#${c + 1}`).join(', ')}`;
}

/** The calls a finding names (its episode, else its own call). */
export function callsOf(f: Pick<StripFinding, 'index' | 'calls'>): number[] {
  return f.calls.length > 0 ? f.calls : f.index === null ? [] : [f.index];
}

/** The part pairs of call `i` as `{ name, tokens }`, largest first. */
export function partsOf(strip: Strip, i: number): Array<{ name: string; tokens: number }> {
  const pairs = strip.columns.parts[i];
  if (!pairs) return [];
  const out: Array<{ name: string; tokens: number }> = [];
  for (let k = 0; k + 1 < pairs.length; k += 2)
    out.push({ name: strip.parts[pairs[k]!] ?? '?', tokens: pairs[k + 1]! });
  return out.sort((a, b) => b.tokens - a.tokens);
}

/** The fullest call: its index and share, or null when no call has a known share. */
export function fullest(model: StripModel): { index: number; share: number } | null {
  let best: { index: number; share: number } | null = null;
  for (const i of model.order) {
    const s = model.share[i]!;
    if (!Number.isNaN(s) && (best === null || s > best.share)) best = { index: i, share: s };
  }
  return best;
}
