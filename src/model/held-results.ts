/**
 * Which tool results a call's input holds, by tool, as `tool_takeover` counts them (DESIGN §6,
 * issue 3) and the run view's strip stacks them (issue 23 §6): one rule, so a bar shows what
 * the finding beside it says.
 *
 * Parts measured from the messages (or estimated for the whole input) already say what the
 * input holds. Producers that only report tool results per call (parts from tool spans, e.g.
 * Claude Code's `result_tokens` or its logged result sizes) give the results since the
 * stream's previous call: those are added up per stream as results still held in context,
 * until a compaction of the stream or a fall in its usage that counts as lost history (the
 * `history_lost` rule: by `dropRatio` of it and `dropMinTokens`) empties them, each tool capped
 * at the call's whole input. A smaller dip between turns (Codex session files: 1.5%) keeps them.
 * Side calls and calls without part sizes neither count nor change what the stream holds. Pure:
 * no I/O, no clock.
 */
import type { InputParts } from './calls.ts';
import { DEFAULT_THRESHOLDS, type Thresholds } from './thresholds.ts';

/** The fall in usage that empties the held results: `history_lost`'s thresholds. */
export type HistoryCut = Pick<Thresholds, 'dropRatio' | 'dropMinTokens'>;

/** True when usage falling from `last` to `now` counts as lost history (a cut of the input). */
export function isHistoryCut(
  last: number | null,
  now: number | null,
  cut: Readonly<HistoryCut> = DEFAULT_THRESHOLDS,
): boolean {
  if (last === null || now === null || now >= last || last <= 0) return false;
  const drop = last - now;
  return drop / last >= cut.dropRatio && drop >= cut.dropMinTokens;
}

/** Tokens (or the parts' unit) of each tool's results, by tool name. */
export type ToolSizes = Record<string, number>;

/** What a stream holds between calls (tool-span streams only). */
export interface HeldResults {
  /** Each tool's results held in context so far. */
  held?: ToolSizes;
  /** The usage of the stream's last counted call, to notice a history cut. */
  lastTokens?: number | null;
}

/** The fields of a call the rule reads. */
export interface HeldCall {
  sideCall: string | null;
  contextTokens: number | null;
  parts: Pick<InputParts, 'unit' | 'total' | 'tools' | 'source'> | null;
}

/**
 * The size that tool shares of `parts` are ratios of: `parts.total`, else the call's
 * `contextTokens` when the parts are counted in tokens. null when neither is known or it is 0.
 */
export function partsTotal(
  parts: Pick<InputParts, 'unit' | 'total'>,
  contextTokens: number | null,
): number | null {
  const total = parts.total ?? (parts.unit === 'tokens' ? contextTokens : null);
  return total !== null && total > 0 ? total : null;
}

/**
 * The results held after this call: the earlier ones (unless the usage fell as lost history
 * does) plus this call's new ones.
 */
export function heldAfter(
  before: Readonly<HeldResults> | undefined,
  call: Pick<HeldCall, 'contextTokens' | 'parts'>,
  historyCut: Readonly<HistoryCut> = DEFAULT_THRESHOLDS,
): ToolSizes {
  const cut = isHistoryCut(before?.lastTokens ?? null, call.contextTokens, historyCut);
  const held: ToolSizes = cut ? {} : { ...(before?.held ?? {}) };
  for (const [tool, size] of Object.entries(call.parts?.tools ?? {}))
    held[tool] = (held[tool] ?? 0) + size;
  return held;
}

/** A held total cannot exceed the whole input (results may have left it unnoticed). */
export function cappedHeld(held: Readonly<ToolSizes>, total: number): ToolSizes {
  return Object.fromEntries(
    Object.entries(held).map(([tool, size]) => [tool, Math.min(size, total)]),
  );
}

/** What one call counts, and what its stream holds after it. */
export interface CountedTools {
  /** The size of the input the tool sizes are shares of. */
  total: number;
  /** Each tool's results in the call's input, as counted. */
  tools: ToolSizes;
  /** Tool-span streams only: what the stream holds after this call (its next state). */
  held?: HeldResults;
}

/**
 * The tool results call `call` holds, given what its stream held before it; null for a call
 * the rule skips (a side call, no part sizes, no total), which leaves the stream as it was.
 */
export function countedTools(
  before: Readonly<HeldResults> | undefined,
  call: HeldCall,
  historyCut: Readonly<HistoryCut> = DEFAULT_THRESHOLDS,
): CountedTools | null {
  if (call.sideCall !== null || call.parts === null) return null;
  const total = partsTotal(call.parts, call.contextTokens);
  if (total === null) return null;
  if (call.parts.source !== 'tool_spans') return { total, tools: call.parts.tools };
  const held = heldAfter(before, call, historyCut);
  return {
    total,
    tools: cappedHeld(held, total),
    held: { held, lastTokens: call.contextTokens },
  };
}

/** One entry of a timeline, as {@link heldPerCall} reads it. */
export type HeldItem =
  ({ type: 'call'; streamKey: string } & HeldCall) | { type: 'compaction'; streamKey: string };

/**
 * For each call of a timeline (calls and compactions in the detectors' order), the tool
 * results its input holds as `tool_takeover` counts them; null for a call the rule skips.
 * Compactions give no entry.
 */
export function heldPerCall(
  items: Iterable<HeldItem>,
  historyCut: Readonly<HistoryCut> = DEFAULT_THRESHOLDS,
): Array<CountedTools | null> {
  const streams = new Map<string, HeldResults>();
  const out: Array<CountedTools | null> = [];
  for (const item of items) {
    if (item.type === 'compaction') {
      // a compaction of the stream empties the results it holds
      const stream = streams.get(item.streamKey);
      if (stream?.held) streams.set(item.streamKey, { ...stream, held: {} });
      continue;
    }
    const counted = countedTools(streams.get(item.streamKey), item, historyCut);
    // a call whose parts say what its input holds starts the stream afresh, as the detector does
    if (counted?.held) streams.set(item.streamKey, counted.held);
    else if (counted) streams.delete(item.streamKey);
    out.push(counted);
  }
  return out;
}
