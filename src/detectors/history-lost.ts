/**
 * `history_lost` (DESIGN §6, issue 3): a call's usage falls from the previous call of the
 * same stream by ≥ `dropRatio` of it and ≥ `dropMinTokens`. Kind `compacted` (info) when a
 * compaction marker explains the drop (a compaction of the stream between the two calls, a
 * compaction of the conversation's main stream, or the call's own `compacted` flag); kind
 * `lost` (warning) otherwise. Warning in both cases when the system prompt shrank by more
 * than `systemShrink` or vanished. Side calls are never a stream's previous or next call.
 */
import type { Compaction, InputParts, LlmCall } from '../model/calls.ts';
import type { FindingDraft, Severity } from '../model/findings.ts';
import type { Detector, DetectorContext } from './types.ts';
import {
  callAnchor,
  formatInt,
  modelOf,
  partsTotal,
  percentOf,
  roundRatio,
  touchBounded,
  wholePercent,
} from './shared.ts';
import { evidenceWords, summaryWithAdvice, threadWords } from './advice.ts';

/** Streams kept in state; the least recently seen are forgotten beyond this. */
const MAX_STREAMS = 256;
/** Main stream keys remembered (normally one per conversation). */
const MAX_MAIN_KEYS = 16;
/** How many parts `partsLost` lists. */
const MAX_PARTS = 5;

/** What explains a drop: a compaction item between the two calls, or the call's own flag. */
export interface Marker {
  source: 'compaction' | 'call_flag';
  evidence: Compaction['evidence'] | null;
  kind: Compaction['kind'] | null;
  trigger: Compaction['trigger'];
  tokensBefore: number | null;
  tokensAfter: number | null;
  traceId: string | null;
  spanId: string | null;
}

interface PrevCall {
  traceId: string;
  spanId: string;
  contextTokens: number;
  contextWindow: number | null;
  parts: Pick<InputParts, 'unit' | 'total' | 'system' | 'tools'> | null;
}

interface StreamState {
  streamKey: string;
  conversationId: string;
  /** The previous non-side call of the stream with a token count. */
  prev: PrevCall;
  /** The latest compaction seen since `prev`, if any. */
  marker: Marker | null;
}

/** Per stream: the previous call and any pending marker; plus the main stream keys seen. */
export interface HistoryLostState {
  streams: StreamState[];
  /** streamKeys of calls without an agent (the main threads of their conversations). */
  mainKeys: string[];
}

/** One part's loss between the two calls, in tokens. */
export interface PartLoss {
  part: 'earlier_messages' | 'system' | 'tool';
  /** The tool's name for `tool`, else null. */
  name: string | null;
  tokens: number;
}

type SystemChange = 'vanished' | 'shrank' | 'unchanged' | 'grew' | 'unknown';

function markerOf(c: Compaction): Marker {
  return {
    source: 'compaction',
    evidence: c.evidence,
    kind: c.kind,
    trigger: c.trigger,
    tokensBefore: c.tokensBefore,
    tokensAfter: c.tokensAfter,
    traceId: c.traceId,
    spanId: c.spanId,
  };
}

function stepCompaction(state: Readonly<HistoryLostState>, c: Compaction) {
  const main = c.streamKey === c.conversationId || state.mainKeys.includes(c.streamKey);
  const marker = markerOf(c);
  const streams = state.streams.map((s) =>
    s.streamKey === c.streamKey || (main && s.conversationId === c.conversationId)
      ? { ...s, marker }
      : s,
  );
  return { state: { ...state, streams }, findings: [] };
}

/** Sizes in token terms: a part's size over the parts' total, times the call's usage. */
function partTokens(parts: PrevCall['parts'], contextTokens: number) {
  if (!parts) return null;
  const total = partsTotal(parts, contextTokens);
  if (total === null) return null;
  const scale = contextTokens / total;
  const tools: Record<string, number> = {};
  let toolSum = 0;
  for (const [name, size] of Object.entries(parts.tools)) {
    tools[name] = size * scale;
    toolSum += size * scale;
  }
  const system = (parts.system ?? 0) * scale;
  return { tools, system, rest: contextTokens - toolSum - system };
}

function partsLost(prev: PrevCall, cur: PrevCall): PartLoss[] | null {
  const a = partTokens(prev.parts, prev.contextTokens);
  const b = partTokens(cur.parts, cur.contextTokens);
  if (!a || !b) return null;
  const losses: PartLoss[] = [
    { part: 'earlier_messages', name: null, tokens: Math.round(a.rest - b.rest) },
    { part: 'system', name: null, tokens: Math.round(a.system - b.system) },
  ];
  const names = new Set([...Object.keys(a.tools), ...Object.keys(b.tools)]);
  for (const name of [...names].sort()) {
    const lost = (a.tools[name] ?? 0) - (b.tools[name] ?? 0);
    losses.push({ part: 'tool', name, tokens: Math.round(lost) });
  }
  return losses
    .filter((l) => l.tokens > 0)
    .sort((x, y) => y.tokens - x.tokens)
    .slice(0, MAX_PARTS);
}

function systemChange(prev: PrevCall, cur: PrevCall, systemShrink: number) {
  const before = prev.parts?.system ?? null;
  const after = cur.parts?.system ?? null;
  const sameUnit = prev.parts?.unit === cur.parts?.unit;
  let change: SystemChange = 'unknown';
  let shrinkRatio: number | null = null;
  if (before !== null && after !== null && sameUnit) {
    shrinkRatio = before > 0 ? (before - after) / before : null;
    if (before > 0 && after === 0) change = 'vanished';
    else if (after < before) change = 'shrank';
    else change = after > before ? 'grew' : 'unchanged';
  }
  const alarming = change === 'vanished' || (shrinkRatio !== null && shrinkRatio > systemShrink);
  return {
    before,
    after,
    unit: sameUnit ? (prev.parts?.unit ?? null) : null,
    change,
    shrinkRatio,
    alarming,
  };
}

function prevOf(call: LlmCall & { contextTokens: number }): PrevCall {
  const p = call.parts;
  return {
    traceId: call.traceId,
    spanId: call.spanId,
    contextTokens: call.contextTokens,
    contextWindow: call.contextWindow,
    parts: p ? { unit: p.unit, total: p.total, system: p.system, tools: { ...p.tools } } : null,
  };
}

function usageOf(c: PrevCall) {
  return {
    traceId: c.traceId,
    spanId: c.spanId,
    tokens: c.contextTokens,
    window: c.contextWindow,
    percent: c.contextWindow ? percentOf(c.contextTokens / c.contextWindow) : null,
  };
}

function partLabel(l: PartLoss): string {
  if (l.part === 'tool') return `${l.name ?? '?'} results`;
  return l.part === 'system' ? 'system prompt' : 'earlier messages';
}

function toFinding(
  call: LlmCall,
  prev: PrevCall,
  cur: PrevCall,
  marker: Marker | null,
  context: DetectorContext,
): FindingDraft {
  const tokensLost = prev.contextTokens - cur.contextTokens;
  const ratio = tokensLost / prev.contextTokens;
  const system = systemChange(prev, cur, context.thresholds.systemShrink);
  const lost = partsLost(prev, cur);
  const kind = marker ? 'compacted' : 'lost';
  const severity: Severity = marker && !system.alarming ? 'info' : 'warning';

  const top = lost?.[0];
  const notes = [
    top ? `most lost: ${partLabel(top)} (${formatInt(top.tokens)} tokens)` : null,
    system.change === 'vanished' ? 'the system prompt vanished' : null,
    system.change === 'shrank' && system.alarming && system.shrinkRatio !== null
      ? `the system prompt shrank ${wholePercent(system.shrinkRatio)}%`
      : null,
  ].filter((n) => n !== null);
  const how =
    marker?.trigger === 'auto'
      ? ' automatically'
      : marker?.trigger === 'manual'
        ? ' on request'
        : '';
  const happened =
    (marker ? `Context compacted${how}` : 'Context dropped with no compaction marker') +
    `: ${formatInt(prev.contextTokens)} → ${formatInt(cur.contextTokens)} tokens ` +
    `(−${wholePercent(ratio)}%) in ${threadWords(call.agentId)}` +
    (marker ? `, marked by ${evidenceWords(marker.evidence)}` : '') +
    (notes.length > 0 ? `; ${notes.join('; ')}` : '');
  const advice = system.alarming
    ? 'keep the system prompt out of what compaction or trimming removes, and check the agent still follows its instructions after the drop'
    : marker
      ? 'nothing if the summary kept what the task needs; if the agent forgot something after it, compact earlier or keep more recent messages'
      : 'if the agent cuts its history on purpose, mark it as a compaction (markCompaction in @rotscope/sdk); if not, compact or start a fresh session before the window forces the cut';
  const summary = summaryWithAdvice(happened, advice);

  return {
    detector: 'history_lost',
    anchor: callAnchor(call),
    severity,
    kind,
    conversationId: call.conversationId,
    streamKey: call.streamKey,
    runId: call.runId,
    traceId: call.traceId,
    spanId: call.spanId,
    model: modelOf(call),
    summary,
    details: {
      tokensLost,
      dropRatio: roundRatio(ratio),
      before: usageOf(prev),
      after: usageOf(cur),
      partsLost: lost,
      systemPromptBefore: system.before,
      systemPromptAfter: system.after,
      systemPromptUnit: system.unit,
      systemPromptChange: system.change,
      systemPromptShrink: system.shrinkRatio === null ? null : roundRatio(system.shrinkRatio),
      marker,
    },
  };
}

function stepCall(state: Readonly<HistoryLostState>, call: LlmCall, context: DetectorContext) {
  const mainKeys =
    call.agentId === null && !state.mainKeys.includes(call.streamKey)
      ? touchBounded(state.mainKeys, (k) => k, call.streamKey, MAX_MAIN_KEYS)
      : state.mainKeys;
  const { contextTokens } = call;
  if (call.sideCall !== null || contextTokens === null) {
    return { state: mainKeys === state.mainKeys ? state : { ...state, mainKeys }, findings: [] };
  }

  const cur = prevOf({ ...call, contextTokens });
  const stream = state.streams.find((s) => s.streamKey === call.streamKey);
  const findings: FindingDraft[] = [];
  if (stream) {
    const { prev } = stream;
    const drop = prev.contextTokens - cur.contextTokens;
    const { dropRatio, dropMinTokens } = context.thresholds;
    if (drop > 0 && drop / prev.contextTokens >= dropRatio && drop >= dropMinTokens) {
      const flag: Marker | null = call.compacted
        ? {
            source: 'call_flag',
            evidence: 'flag',
            kind: null,
            trigger: null,
            tokensBefore: null,
            tokensAfter: null,
            traceId: call.traceId,
            spanId: call.spanId,
          }
        : null;
      findings.push(toFinding(call, prev, cur, stream.marker ?? flag, context));
    }
  }
  const next: StreamState = {
    streamKey: call.streamKey,
    conversationId: call.conversationId,
    prev: cur,
    marker: null,
  };
  const streams = touchBounded(state.streams, (s) => s.streamKey, next, MAX_STREAMS);
  return { state: { streams, mainKeys }, findings };
}

/** The `history_lost` detector. */
export const historyLost: Detector<HistoryLostState> = {
  id: 'history_lost',
  initial: () => ({ streams: [], mainKeys: [] }),
  step(state, item, context) {
    if (item.type === 'compaction') return stepCompaction(state, item.compaction);
    return stepCall(state, item.call, context);
  },
};
