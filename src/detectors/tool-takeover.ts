/**
 * `tool_takeover` (DESIGN §6, issue 3): one tool's results take ≥ `toolShare` of a call's
 * input (an episode starts) and keep ≥ half of that for each of the next `toolPersistCalls`
 * calls of the same stream (the episode fires, warning). A single large result trimmed on
 * the next call never fires. One finding per episode; a new episode for the tool needs its
 * share to fall below half first. Side calls and calls without part sizes are skipped.
 *
 * A fired episode keeps being reported (same anchor, same severity) on each later call it lasts,
 * so the finding's numbers follow it as it grows (issue 36 §5): its calls, its peak share and
 * the most tokens the tool held. The driver keeps one finding per anchor and the store updates
 * it in place; an update at the same severity is not sent again.
 *
 * Producers that only report tool results per call (parts from tool spans, e.g. Claude Code's
 * `result_tokens`) give the results since the stream's previous call, not what the input
 * holds: those are added up per stream as results still held in context, until a
 * compaction of the stream or a fall in its usage that counts as lost history (`dropRatio` and
 * `dropMinTokens`) empties them. That rule is
 * src/model/held-results.ts, which the run view's strip stacks its bars with too.
 */
import type { LlmCall } from '../model/calls.ts';
import type { FindingDraft } from '../model/findings.ts';
import { countedTools, type HeldResults } from '../model/held-results.ts';
import type { Detector, DetectorContext } from './types.ts';
import { summaryWithAdvice, threadWords, toolAdvice } from './advice.ts';
import {
  formatInt,
  modelOf,
  roundRatio,
  touchBounded,
  wholePercent,
  withProse,
  type FindingProse,
} from './shared.ts';
import { plural } from '../model/plural.ts';

/** Streams kept in state; the least recently seen are forgotten beyond this. */
const MAX_STREAMS = 256;

/** One call of an episode. */
export interface EpisodeCall {
  traceId: string;
  spanId: string;
  /** The tool's share of the call's input, full precision. */
  share: number;
  /** share × the call's contextTokens, rounded; null when the call has no token count. */
  tokens: number | null;
}

interface Episode {
  tool: string;
  /** Set when the sizes are tokens estimated from bytes (Claude Code's logged result sizes). */
  estimatedFrom?: 'bytes';
  runId: string;
  model: string | null;
  /** The first call and the calls after it, up to toolPersistCalls + 1 (no more once fired). */
  calls: EpisodeCall[];
  fired: boolean;
  /** Calls of the episode so far (absent in states stored before: `calls.length`). */
  count?: number;
  /** The call with the highest share so far (absent before: the highest of `calls`). */
  peak?: EpisodeCall;
  /** The most tokens the tool held at any call of the episode so far. */
  mostTokens?: number | null;
  /** The episode's latest call (absent before: the last of `calls`). */
  last?: EpisodeCall;
  /** The highest share of the calls after those that made it fire (none yet: absent). */
  laterPeak?: number;
}

/** The episode after one more call of it: its count, peak, most tokens and last call. */
function grown(episode: Episode, call: EpisodeCall): Episode {
  const peak = peakOf(episode);
  const most = mostTokensOf(episode);
  // A copy, then stores: `{ ...episode, count, … }` with keys `episode` already has takes
  // V8's slow path (issue 39). The same keys in the same order.
  const next = { ...episode };
  next.count = countOf(episode) + 1;
  next.peak = call.share > peak.share ? call : peak;
  next.mostTokens = call.tokens === null ? most : Math.max(most ?? 0, call.tokens);
  next.last = call;
  return next;
}
const countOf = (e: Episode) => e.count ?? e.calls.length;
function peakOf(e: Episode): EpisodeCall {
  if (e.peak) return e.peak;
  const first = e.calls[0];
  if (!first) throw new Error('tool_takeover: an episode without calls');
  return e.calls.reduce((a, b) => (b.share > a.share ? b : a), first);
}
function mostTokensOf(e: Episode): number | null {
  if (e.mostTokens !== undefined) return e.mostTokens;
  const known = e.calls.flatMap((c) => (c.tokens === null ? [] : [c.tokens]));
  return known.length === 0 ? null : Math.max(...known);
}

/** `held` and `lastTokens` (tool-span streams only): what the stream's input holds so far. */
interface StreamState extends HeldResults {
  streamKey: string;
  /** Open episodes: the tool's share has not yet fallen below half of toolShare. */
  episodes: Episode[];
}

/** Open episodes per stream (streams with none are dropped; most recently seen last, at most 256). */
export interface ToolTakeoverState {
  streams: StreamState[];
}

function toFinding(call: LlmCall, episode: Episode, context: DetectorContext): FindingDraft {
  const first = episode.calls[0];
  if (!first) throw new Error('tool_takeover: an episode without calls');
  return withProse(
    {
      detector: 'tool_takeover',
      anchor: `${call.streamKey}|${episode.tool}|${first.spanId}`,
      severity: 'warning',
      kind: null,
      conversationId: call.conversationId,
      streamKey: call.streamKey,
      runId: episode.runId,
      traceId: first.traceId,
      spanId: first.spanId,
      model: episode.model,
    },
    () => proseOf(call, episode, first, context),
  );
}

/** The summary and details of an episode's finding as of `call`. */
function proseOf(
  call: LlmCall,
  episode: Episode,
  first: EpisodeCall,
  context: DetectorContext,
): FindingProse {
  const peak = peakOf(episode);
  const most = mostTokensOf(episode);
  const count = countOf(episode);
  const last = episode.last ?? episode.calls.at(-1) ?? first;
  const firing = episode.calls.map((c) => `${wholePercent(c.share)}%`).join(', ');
  // the calls that made it fire, then how it went on: "…, then up to 71% … over 9 calls"
  const shares =
    episode.laterPeak === undefined
      ? firing
      : `${firing}, then up to ${wholePercent(episode.laterPeak)}%`;
  const estimated = episode.estimatedFrom === 'bytes' ? ', estimated from result bytes' : '';
  const tokens = most === null ? '' : ` (${formatInt(most)} tokens at peak${estimated})`;
  return {
    summary: summaryWithAdvice(
      `Results of tool ${episode.tool} took ${shares} of the input over ${plural(count, 'call')}` +
        `${tokens} in ${threadWords(call.agentId)}`,
      toolAdvice(episode.tool),
    ),
    details: {
      tool: episode.tool,
      toolShare: context.thresholds.toolShare,
      toolPersistCalls: context.thresholds.toolPersistCalls,
      peakShare: roundRatio(peak.share),
      /** The most tokens the tool's results held at any call of the episode so far. */
      peakTokens: most,
      estimatedFrom: episode.estimatedFrom ?? null,
      /** The calls that made the episode fire (the first and toolPersistCalls after it). */
      calls: episode.calls.map((c) => ({ ...c, share: roundRatio(c.share) })),
      /** Calls of the episode so far, and its latest: the finding follows it as it grows. */
      callCount: count,
      lastCall: { ...last, share: roundRatio(last.share) },
    },
  };
}

function stepCall(state: Readonly<ToolTakeoverState>, call: LlmCall, context: DetectorContext) {
  const before = state.streams.find((s) => s.streamKey === call.streamKey);
  const counted = countedTools(before, call, context.thresholds);
  if (counted === null || call.parts === null) return { state, findings: [] };
  const { total, tools } = counted;
  const held = counted.held?.held;

  const { toolShare, toolPersistCalls } = context.thresholds;
  const half = toolShare / 2;
  const open = before?.episodes ?? [];
  const findings: FindingDraft[] = [];
  const episodes: Episode[] = [];
  const entryOf = (share: number): EpisodeCall => ({
    traceId: call.traceId,
    spanId: call.spanId,
    share,
    tokens: call.contextTokens === null ? null : Math.round(share * call.contextTokens),
  });

  for (const episode of open) {
    const share = (tools[episode.tool] ?? 0) / total;
    if (share < half) continue; // the episode ends; a new one may start later
    const entry = entryOf(share);
    if (episode.fired) {
      // the episode goes on: its finding follows (same anchor, same severity)
      const next = grown(episode, entry);
      next.laterPeak = Math.max(episode.laterPeak ?? 0, share);
      findings.push(toFinding(call, next, context));
      episodes.push(next);
      continue;
    }
    const next = grown(episode, entry);
    next.calls = [...episode.calls, entry];
    if (next.calls.length - 1 >= toolPersistCalls) {
      next.fired = true;
      findings.push(toFinding(call, next, context));
    }
    episodes.push(next);
  }

  for (const tool of Object.keys(tools).sort()) {
    const share = (tools[tool] ?? 0) / total;
    if (share < toolShare || open.some((e) => e.tool === tool)) continue;
    const entry = entryOf(share);
    const episode: Episode = {
      tool,
      ...(call.parts.estimatedFrom ? { estimatedFrom: call.parts.estimatedFrom } : {}),
      runId: call.runId,
      model: modelOf(call),
      calls: [entry],
      fired: false,
      count: 1,
      peak: entry,
      mostTokens: entry.tokens,
      last: entry,
    };
    if (toolPersistCalls <= 0) {
      episode.fired = true;
      findings.push(toFinding(call, episode, context));
    }
    episodes.push(episode);
  }

  if (episodes.length === 0 && !held) {
    if (!before) return { state, findings };
    const streams = state.streams.filter((s) => s.streamKey !== call.streamKey);
    return { state: { streams }, findings };
  }
  const entry: StreamState = held
    ? { streamKey: call.streamKey, episodes, held, lastTokens: call.contextTokens }
    : { streamKey: call.streamKey, episodes };
  const streams = touchBounded(state.streams, (s) => s.streamKey, entry, MAX_STREAMS);
  return { state: { streams }, findings };
}

/** A compaction of a stream empties the results it holds. */
function stepCompaction(state: Readonly<ToolTakeoverState>, streamKey: string) {
  const stream = state.streams.find((s) => s.streamKey === streamKey);
  if (!stream?.held) return { state, findings: [] };
  const streams = state.streams.map((s) => (s === stream ? { ...s, held: {} } : s));
  return { state: { streams }, findings: [] };
}

/** The `tool_takeover` detector. */
export const toolTakeover: Detector<ToolTakeoverState> = {
  id: 'tool_takeover',
  initial: () => ({ streams: [] }),
  step(state, item, context) {
    if (item.type === 'compaction') return stepCompaction(state, item.compaction.streamKey);
    return stepCall(state, item.call, context);
  },
};
