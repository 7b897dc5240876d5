/**
 * `context_too_full` (DESIGN §6, issue 3): the first call of a run whose usage reaches
 * `usageThreshold` of its window fires one finding per run. Warning; critical once the run's
 * fullest call reaches `usageCritical` or any call of the run stopped with a context overflow
 * (an overflow fires even below the threshold). Later calls update the reported fullest call
 * and may escalate; nothing is ever removed. Side calls count too. Usage is judged on the best
 * window known for the model in the run: when a later call shows a larger window (a `[1m]`
 * span, usage above the catalog's size), the fullest call is judged again on it. A window
 * that is only assumed is said so in the summary, and so is the tool whose results took the
 * largest share of the fullest call (when the producer sent part sizes).
 *
 * What the agent did says more than the catalog (issue 19 §3): a Claude Code automatic
 * compaction with 150k–200k tokens before it is what Claude Code does on a 200k window, so the
 * model the stream was using ran on 200k, whatever the catalog's default for it is now. Calls
 * of that model in the run whose window came from the catalog (or was assumed) are judged on
 * 200k (source `compaction`), the fullest one again at once; a window the agent stated (`[1m]`,
 * usage above 200k) or an override is never lowered. A call without a window (a model no rule
 * knows) is not judged.
 */
import type { Compaction, LlmCall, WindowSource } from '../model/calls.ts';
import type { FindingDraft, Severity } from '../model/findings.ts';
import { CLAUDE_CODE_AUTO_COMPACT, CLAUDE_CODE_CALL_PRODUCERS } from '../model/window-catalog.ts';
import type { Detector, DetectorContext } from './types.ts';
import { summaryWithAdvice, toolAdvice } from './advice.ts';
import {
  formatInt,
  modelOf,
  partsTotal,
  percentOf,
  touchBounded,
  wholePercent,
  withProse,
  type FindingProse,
} from './shared.ts';

/** Runs kept in state; older runs are forgotten (a late call of one starts it afresh). */
const MAX_RUNS = 64;
/** Streams whose last Claude Code model is kept (for the window an auto-compaction shows). */
const MAX_STREAMS = 64;

/** Window sources the agent or the user stated: an auto-compaction never lowers them. */
const STATED: ReadonlySet<WindowSource | null> = new Set<WindowSource | null>([
  'override',
  'model_id',
  'agent',
  'inferred',
]);

/** A call's usage against its window, as reported in details. */
export interface UsageSnapshot {
  traceId: string;
  spanId: string;
  model: string | null;
  usageTokens: number;
  window: number;
  /** usageTokens / window, full precision. */
  usage: number;
  /** usage as a percentage, one decimal. */
  percent: number;
  windowSource: WindowSource | null;
  /**
   * The tool whose results took the largest share of the call's input, when part sizes are
   * known and some tool's results were in it; absent in state stored by older versions.
   */
  topTool?: { name: string; share: number } | null;
}

interface RunState {
  runId: string;
  conversationId: string;
  /** The call that fired the finding (the finding's call); null until it fires. */
  firedBy: { traceId: string; spanId: string; streamKey: string; model: string | null } | null;
  severity: Severity | null;
  fullest: UsageSnapshot | null;
  firstCrossing: UsageSnapshot | null;
  overflow: {
    traceId: string;
    spanId: string;
    model: string | null;
    finishReason: string | null;
  } | null;
  /**
   * The best window known so far per model of the run (the largest; a settled source beats
   * `assumed` at the same size; the 200k an auto-compaction shows beats a catalog or assumed
   * one, with the compaction's tokens before in `compactedAt`), keyed by the model id without
   * its `[1m]` marker. Absent in state stored by older versions.
   */
  windows?: Record<string, { window: number; source: WindowSource | null; compactedAt?: number }>;
  /**
   * Per model of the run (same keys), the Claude Code call with the largest usage, as judged
   * then: an auto-compaction cannot show a window smaller than a usage the model reached, and
   * judges this call again on the window it shows. Absent in older state.
   */
  peaks?: Record<string, UsageSnapshot>;
}

/** Per run (most recently seen last, at most 64): the fullest call and the finding's state. */
export interface ContextTooFullState {
  runs: RunState[];
  /**
   * Per stream (most recently seen last, at most 64): the model and run of its last Claude Code
   * call, so an auto-compaction of the stream names the model it shows the window of. Absent
   * in state stored by older versions.
   */
  streams?: Array<{ streamKey: string; model: string; runId: string }>;
}

type BestWindows = NonNullable<RunState['windows']>;

/** The key a model's windows are compared under: lower case, without the `[1m]` marker. */
function windowKey(model: string | null): string {
  return (model ?? '').toLowerCase().replace('[1m]', '');
}

/** The run's best windows after seeing this call's window. */
function learnWindow(windows: BestWindows, call: LlmCall): BestWindows {
  if (call.contextWindow === null || call.contextWindow <= 0) return windows;
  const key = windowKey(modelOf(call));
  const known = windows[key];
  const better =
    known === undefined ||
    (known.source === 'compaction'
      ? // the compaction's window stands until the agent states a larger one or usage passes it
        (STATED.has(call.windowSource) || (call.contextTokens ?? 0) > known.window) &&
        call.contextWindow > known.window
      : call.contextWindow > known.window ||
        (call.contextWindow === known.window &&
          known.source === 'assumed' &&
          call.windowSource !== 'assumed'));
  if (!better) return windows;
  return { ...windows, [key]: { window: call.contextWindow, source: call.windowSource } };
}

/** The run's fullest call per model after this call (the same object when unchanged). */
function learnPeak(
  peaks: RunState['peaks'],
  call: LlmCall,
  snap: UsageSnapshot | null,
): RunState['peaks'] {
  // only Claude Code's calls: the auto-compaction rule is theirs
  if (snap === null || !CLAUDE_CODE_CALL_PRODUCERS.includes(call.producer)) return peaks;
  const key = windowKey(snap.model);
  if ((peaks?.[key]?.usageTokens ?? -1) >= snap.usageTokens) return peaks;
  return { ...(peaks ?? {}), [key]: snap };
}

/**
 * The window to judge a usage on: the run's best for the model when larger than the call's
 * own, or the smaller window an auto-compaction showed when the call's own came from the
 * catalog (or was assumed) and the usage fits in it; else the call's own.
 */
function bestWindow(
  own: { window: number; source: WindowSource | null },
  best: BestWindows[string] | undefined,
  usageTokens: number,
): { window: number; source: WindowSource | null } {
  if (best === undefined) return own;
  if (best.source === 'compaction') {
    const lowered =
      best.window < own.window && !STATED.has(own.source) && usageTokens <= best.window;
    return lowered ? { window: best.window, source: best.source } : own;
  }
  return best.window > own.window ? { window: best.window, source: best.source } : own;
}

function judged(
  base: Omit<UsageSnapshot, 'window' | 'usage' | 'percent' | 'windowSource'>,
  window: { window: number; source: WindowSource | null },
): UsageSnapshot {
  const usage = base.usageTokens / window.window;
  // Written out rather than `{ ...base, window, ... }`: a spread whose later keys are already in
  // `base` (a snapshot judged again) takes V8's slow path, which made this a third of the
  // detectors' time (issue 39). The keys keep the spread's order.
  const { traceId, spanId, model, usageTokens, topTool } = base;
  const percent = percentOf(usage);
  const windowSource = window.source;
  return topTool === undefined
    ? { traceId, spanId, model, usageTokens, window: window.window, usage, percent, windowSource }
    : {
        traceId,
        spanId,
        model,
        usageTokens,
        topTool,
        window: window.window,
        usage,
        percent,
        windowSource,
      };
}

/** The tool whose results take the largest share of the call's input, if any. */
function topToolOf(call: LlmCall): { name: string; share: number } | null {
  if (call.parts === null) return null;
  const total = partsTotal(call.parts, call.contextTokens);
  if (total === null) return null;
  let top: { name: string; share: number } | null = null;
  for (const name of Object.keys(call.parts.tools).sort()) {
    const share = (call.parts.tools[name] ?? 0) / total;
    if (share > 0 && (top === null || share > top.share)) top = { name, share: Math.min(share, 1) };
  }
  return top;
}

/** The call's usage judged on the best window known for its model in the run. */
function snapshot(call: LlmCall, windows: BestWindows): UsageSnapshot | null {
  const { contextTokens, contextWindow } = call;
  if (contextTokens === null || contextWindow === null || contextWindow <= 0) return null;
  const window = bestWindow(
    { window: contextWindow, source: call.windowSource },
    windows[windowKey(modelOf(call))],
    contextTokens,
  );
  return judged(
    {
      traceId: call.traceId,
      spanId: call.spanId,
      model: modelOf(call),
      usageTokens: contextTokens,
      topTool: topToolOf(call),
    },
    window,
  );
}

/** The fullest call judged again when a better window of its model became known. */
function rejudged(fullest: UsageSnapshot | null, windows: BestWindows): UsageSnapshot | null {
  if (fullest === null) return null;
  const own = { window: fullest.window, source: fullest.windowSource };
  const window = bestWindow(own, windows[windowKey(fullest.model)], fullest.usageTokens);
  if (window.window === own.window && window.source === own.source) return fullest;
  return judged(fullest, window);
}

/** Whether a compaction is Claude Code's automatic one where a 200k window compacts. */
function showsAutoCompactWindow(compaction: Compaction): compaction is Compaction & {
  tokensBefore: number;
} {
  const { minTokens, maxTokens } = CLAUDE_CODE_AUTO_COMPACT;
  return (
    compaction.trigger === 'auto' &&
    compaction.tokensBefore !== null &&
    compaction.tokensBefore >= minTokens &&
    compaction.tokensBefore <= maxTokens
  );
}

function isOverflow(call: LlmCall): boolean {
  return (
    call.finishClass === 'context_overflow' ||
    call.finishReasonRaw?.toLowerCase() === 'model_context_window_exceeded'
  );
}

/** A tool named as the cause once its results are at least this share of the fullest call. */
const NAMED_TOOL_SHARE = 0.25;

function toFinding(
  run: RunState,
  firedBy: NonNullable<RunState['firedBy']>,
  severity: Severity,
  context: DetectorContext,
): FindingDraft {
  const { fullest, overflow } = run;
  const model = fullest?.model ?? overflow?.model ?? firedBy.model;
  return withProse(
    {
      detector: 'context_too_full',
      anchor: `${run.conversationId}|${run.runId}`,
      severity,
      kind: null,
      conversationId: run.conversationId,
      streamKey: firedBy.streamKey,
      runId: run.runId,
      traceId: firedBy.traceId,
      spanId: firedBy.spanId,
      model,
    },
    () => proseOf(run, model, context),
  );
}

/** The summary and details of a run's finding. */
function proseOf(run: RunState, model: string | null, context: DetectorContext): FindingProse {
  const { fullest, overflow } = run;
  const on = `on ${model ?? 'an unknown model'}`;
  const tool =
    fullest?.topTool && fullest.topTool.share >= NAMED_TOOL_SHARE ? fullest.topTool : null;
  const assumed = fullest?.windowSource === 'assumed';
  const compactedAt =
    fullest?.windowSource === 'compaction'
      ? run.windows?.[windowKey(fullest.model)]?.compactedAt
      : undefined;
  const happened = fullest
    ? `Context ${wholePercent(fullest.usage)}% full (${formatInt(fullest.usageTokens)} of ${formatInt(fullest.window)} tokens) ${on}` +
      (overflow ? '; a call overflowed the context window' : '') +
      (tool ? `; results of tool ${tool.name} were ${wholePercent(tool.share)}% of it` : '') +
      (assumed
        ? `; the ${formatInt(fullest.window)}-token window is assumed (the model id does not settle it)`
        : '') +
      (compactedAt !== undefined
        ? `; the ${formatInt(fullest.window)}-token window is what Claude Code's automatic compaction at ${formatInt(compactedAt)} tokens shows`
        : '')
    : `A call overflowed the context window ${on}`;
  const limit = `compact or start a fresh session before the context passes ${wholePercent(context.thresholds.usageThreshold)}%`;
  const advice =
    (tool ? `${toolAdvice(tool.name)}; ${limit}` : limit) +
    (assumed && fullest
      ? `; if the model's window is not ${formatInt(fullest.window)} tokens, set a window override on the alert`
      : '');
  return {
    summary: summaryWithAdvice(happened, advice),
    details: {
      runId: run.runId,
      fullestCall: fullest,
      firstCrossingCall: run.firstCrossing,
      overflowCall: overflow,
    },
  };
}

/** The stream's last Claude Code model, for a later auto-compaction of the stream. */
function noteStream(
  streams: ContextTooFullState['streams'],
  call: LlmCall,
): ContextTooFullState['streams'] {
  const model = modelOf(call);
  if (model === null || !CLAUDE_CODE_CALL_PRODUCERS.includes(call.producer)) return streams;
  const known = streams?.find((s) => s.streamKey === call.streamKey);
  if (known !== undefined && known.model === model && known.runId === call.runId) return streams;
  return touchBounded(
    streams ?? [],
    (s) => s.streamKey,
    { streamKey: call.streamKey, model, runId: call.runId },
    MAX_STREAMS,
  );
}

/** The finding to upsert when the run's finding changed, else none. */
function findingsOf(before: RunState | null, run: RunState, context: DetectorContext) {
  const changed =
    run.firedBy !== null &&
    (before?.firedBy == null ||
      before.severity !== run.severity ||
      before.fullest !== run.fullest ||
      before.firstCrossing !== run.firstCrossing ||
      before.overflow !== run.overflow);
  return changed && run.firedBy && run.severity
    ? [toFinding(run, run.firedBy, run.severity, context)]
    : [];
}

/**
 * An auto-compaction where a 200k window compacts: the model the stream was using gets that
 * window in its run (unless a stated window says otherwise), and the run's fullest call is
 * judged on it at once (it may fire or escalate the finding).
 */
function stepCompaction(
  state: Readonly<ContextTooFullState>,
  compaction: Compaction,
  context: DetectorContext,
) {
  const unchanged = { state: state as ContextTooFullState, findings: [] };
  if (!showsAutoCompactWindow(compaction)) return unchanged;
  const stream = state.streams?.find((s) => s.streamKey === compaction.streamKey);
  const before = stream && state.runs.find((r) => r.runId === stream.runId);
  if (!stream || !before) return unchanged;
  const key = windowKey(stream.model);
  const { window } = CLAUDE_CODE_AUTO_COMPACT;
  const known = before.windows?.[key];
  // a window the agent stated as larger (a [1m] id, usage above 200k) or an override stands
  if (known !== undefined && STATED.has(known.source) && known.window > window) return unchanged;
  if (known?.source === 'compaction') return unchanged;
  // the model already held more than that window in this run
  const peak = before.peaks?.[key];
  if (peak !== undefined && peak.usageTokens > window) return unchanged;
  const run: RunState = { ...before };
  run.windows = {
    ...(before.windows ?? {}),
    [key]: { window, source: 'compaction', compactedAt: compaction.tokensBefore },
  };
  run.fullest = rejudged(run.fullest, run.windows);
  // the model's fullest call, judged on that window, may now be the run's fullest
  const rePeak = peak === undefined ? null : rejudged(peak, run.windows);
  if (rePeak !== null && (run.fullest === null || rePeak.usage > run.fullest.usage)) {
    run.fullest = rePeak;
  }
  const { usageThreshold, usageCritical } = context.thresholds;
  const crossing = run.fullest !== null && run.fullest.usage >= usageThreshold;
  if (crossing && run.firstCrossing === null) run.firstCrossing = run.fullest;
  if (run.firedBy === null && crossing && run.fullest !== null) {
    run.firedBy = {
      traceId: run.fullest.traceId,
      spanId: run.fullest.spanId,
      streamKey: compaction.streamKey,
      model: run.fullest.model,
    };
  }
  if (run.firedBy !== null) {
    const critical =
      run.overflow !== null || (run.fullest !== null && run.fullest.usage >= usageCritical);
    run.severity = critical || run.severity === 'critical' ? 'critical' : 'warning';
  }
  const runs = touchBounded(state.runs, (r) => r.runId, run, MAX_RUNS);
  return { state: { ...state, runs }, findings: findingsOf(before, run, context) };
}

function stepCall(state: Readonly<ContextTooFullState>, call: LlmCall, context: DetectorContext) {
  const { usageThreshold, usageCritical } = context.thresholds;
  const before = state.runs.find((r) => r.runId === call.runId) ?? null;
  const run: RunState = before
    ? { ...before }
    : {
        runId: call.runId,
        conversationId: call.conversationId,
        firedBy: null,
        severity: null,
        fullest: null,
        firstCrossing: null,
        overflow: null,
      };

  run.windows = learnWindow(run.windows ?? {}, call);
  run.fullest = rejudged(run.fullest, run.windows);
  const snap = snapshot(call, run.windows);
  const peaks = learnPeak(run.peaks, call, snap);
  if (peaks !== undefined) run.peaks = peaks;
  const crossing = snap !== null && snap.usage >= usageThreshold;
  if (snap && (run.fullest === null || snap.usage > run.fullest.usage)) run.fullest = snap;
  if (crossing && run.firstCrossing === null) run.firstCrossing = snap;
  if (isOverflow(call) && run.overflow === null) {
    run.overflow = {
      traceId: call.traceId,
      spanId: call.spanId,
      model: modelOf(call),
      finishReason: call.finishReasonRaw,
    };
  }
  if (run.firedBy === null && (crossing || run.overflow !== null)) {
    run.firedBy = {
      traceId: call.traceId,
      spanId: call.spanId,
      streamKey: call.streamKey,
      model: modelOf(call),
    };
  }
  if (run.firedBy !== null) {
    const critical =
      run.overflow !== null || (run.fullest !== null && run.fullest.usage >= usageCritical);
    run.severity = critical || run.severity === 'critical' ? 'critical' : 'warning';
  }

  const runs = touchBounded(state.runs, (r) => r.runId, run, MAX_RUNS);
  const streams = noteStream(state.streams, call);
  const next: ContextTooFullState = streams === undefined ? { runs } : { runs, streams };
  return { state: next, findings: findingsOf(before, run, context) };
}

/** The `context_too_full` detector. */
export const contextTooFull: Detector<ContextTooFullState> = {
  id: 'context_too_full',
  initial: () => ({ runs: [] }),
  step(state, item, context) {
    if (item.type === 'compaction') return stepCompaction(state, item.compaction, context);
    return stepCall(state, item.call, context);
  },
};
