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
 */
import type { LlmCall, WindowSource } from '../model/calls.ts';
import type { FindingDraft, Severity } from '../model/findings.ts';
import type { Detector, DetectorContext } from './types.ts';
import { summaryWithAdvice, toolAdvice } from './advice.ts';
import { formatInt, modelOf, partsTotal, percentOf, touchBounded, wholePercent } from './shared.ts';

/** Runs kept in state; older runs are forgotten (a late call of one starts it afresh). */
const MAX_RUNS = 64;

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
   * `assumed` at the same size), keyed by the model id without its `[1m]` marker. Absent in
   * state stored by older versions.
   */
  windows?: Record<string, { window: number; source: WindowSource | null }>;
}

/** Per run (most recently seen last, at most 64): the fullest call and the finding's state. */
export interface ContextTooFullState {
  runs: RunState[];
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
    call.contextWindow > known.window ||
    (call.contextWindow === known.window &&
      known.source === 'assumed' &&
      call.windowSource !== 'assumed');
  if (!better) return windows;
  return { ...windows, [key]: { window: call.contextWindow, source: call.windowSource } };
}

function judged(
  base: Omit<UsageSnapshot, 'window' | 'usage' | 'percent' | 'windowSource'>,
  window: { window: number; source: WindowSource | null },
): UsageSnapshot {
  const usage = base.usageTokens / window.window;
  return {
    ...base,
    window: window.window,
    usage,
    percent: percentOf(usage),
    windowSource: window.source,
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
  const best = windows[windowKey(modelOf(call))];
  const window =
    best !== undefined && best.window > contextWindow
      ? best
      : { window: contextWindow, source: call.windowSource };
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

/** The fullest call judged again when a larger window of its model became known. */
function rejudged(fullest: UsageSnapshot | null, windows: BestWindows): UsageSnapshot | null {
  if (fullest === null) return null;
  const best = windows[windowKey(fullest.model)];
  if (best === undefined || best.window <= fullest.window) return fullest;
  return judged(fullest, best);
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
  const on = `on ${model ?? 'an unknown model'}`;
  const tool =
    fullest?.topTool && fullest.topTool.share >= NAMED_TOOL_SHARE ? fullest.topTool : null;
  const assumed = fullest?.windowSource === 'assumed';
  const happened = fullest
    ? `Context ${wholePercent(fullest.usage)}% full (${formatInt(fullest.usageTokens)} of ${formatInt(fullest.window)} tokens) ${on}` +
      (overflow ? '; a call overflowed the context window' : '') +
      (tool ? `; results of tool ${tool.name} were ${wholePercent(tool.share)}% of it` : '') +
      (assumed
        ? `; the ${formatInt(fullest.window)}-token window is assumed (the model id does not settle it)`
        : '')
    : `A call overflowed the context window ${on}`;
  const limit = `compact or start a fresh session before the context passes ${wholePercent(context.thresholds.usageThreshold)}%`;
  const advice =
    (tool ? `${toolAdvice(tool.name)}; ${limit}` : limit) +
    (assumed && fullest
      ? `; if the model's window is not ${formatInt(fullest.window)} tokens, set a window override on the alert`
      : '');
  const summary = summaryWithAdvice(happened, advice);
  return {
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
    summary,
    details: {
      runId: run.runId,
      fullestCall: fullest,
      firstCrossingCall: run.firstCrossing,
      overflowCall: overflow,
    },
  };
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
  const changed =
    run.firedBy !== null &&
    (before?.firedBy == null ||
      before.severity !== run.severity ||
      before.fullest !== run.fullest ||
      before.firstCrossing !== run.firstCrossing ||
      before.overflow !== run.overflow);
  const findings =
    changed && run.firedBy && run.severity
      ? [toFinding(run, run.firedBy, run.severity, context)]
      : [];
  return { state: { runs }, findings };
}

/** The `context_too_full` detector. */
export const contextTooFull: Detector<ContextTooFullState> = {
  id: 'context_too_full',
  initial: () => ({ runs: [] }),
  step(state, item, context) {
    if (item.type !== 'call') return { state, findings: [] };
    return stepCall(state, item.call, context);
  },
};
