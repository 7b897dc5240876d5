/**
 * `context_too_full` (DESIGN §6, issue 3): the first call of a run whose usage reaches
 * `usageThreshold` of its window fires one finding per run. Warning; critical once the run's
 * fullest call reaches `usageCritical` or any call of the run stopped with a context overflow
 * (an overflow fires even below the threshold). Later calls update the reported fullest call
 * and may escalate; nothing is ever removed. Side calls count too.
 */
import type { LlmCall, WindowSource } from '../model/calls.ts';
import type { FindingDraft, Severity } from '../model/findings.ts';
import type { Detector, DetectorContext } from './types.ts';
import { formatInt, modelOf, percentOf, shortId, touchBounded, wholePercent } from './shared.ts';

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
}

/** Per run (most recently seen last, at most 64): the fullest call and the finding's state. */
export interface ContextTooFullState {
  runs: RunState[];
}

function snapshot(call: LlmCall): UsageSnapshot | null {
  const { contextTokens, contextWindow } = call;
  if (contextTokens === null || contextWindow === null || contextWindow <= 0) return null;
  const usage = contextTokens / contextWindow;
  return {
    traceId: call.traceId,
    spanId: call.spanId,
    model: modelOf(call),
    usageTokens: contextTokens,
    window: contextWindow,
    usage,
    percent: percentOf(usage),
    windowSource: call.windowSource,
  };
}

function isOverflow(call: LlmCall): boolean {
  return (
    call.finishClass === 'context_overflow' ||
    call.finishReasonRaw?.toLowerCase() === 'model_context_window_exceeded'
  );
}

function toFinding(
  run: RunState,
  firedBy: NonNullable<RunState['firedBy']>,
  severity: Severity,
): FindingDraft {
  const { fullest, overflow } = run;
  const model = fullest?.model ?? overflow?.model ?? firedBy.model;
  const where = `on ${model ?? 'an unknown model'} in run ${shortId(run.runId)}`;
  const summary = fullest
    ? `Context ${wholePercent(fullest.usage)}% full (${formatInt(fullest.usageTokens)} of ${formatInt(fullest.window)} tokens) ${where}` +
      (overflow ? '; a call overflowed the context window' : '')
    : `Context window overflowed ${where}`;
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

  const snap = snapshot(call);
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
    changed && run.firedBy && run.severity ? [toFinding(run, run.firedBy, run.severity)] : [];
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
