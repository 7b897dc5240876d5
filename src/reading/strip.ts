/**
 * The context growth strip of a conversation or a run, for the console's run view: one row per
 * LLM call in `(start_ns, span_id)` order, served as columns (one array per field, repeated
 * strings as indexes into small dictionaries), so a run of 10,000 calls is a few hundred KB of
 * numbers rather than 10,000 call objects. Only what the page draws is read: no raw spans, no
 * message content (the rows: src/store/strip-rows.ts). The drops (history_lost), cut-off outputs
 * and tool takeovers come from the stored findings and point by index at the call their text is
 * about (src/reading/strip-marks.ts).
 *
 * A call's parts are its input as tool_takeover counts it (src/model/held-results.ts): where the
 * producer reports only each call's new tool results (Claude Code's telemetry), the results
 * the stream still holds are stacked on every later call until a compaction or a history cut,
 * so a bar shows the share the finding gives.
 */
import type { InputParts } from '../model/calls.ts';
import { getAlertSettings } from '../store/alerts.ts';
import { heldPerCall, type HeldItem, type ToolSizes } from '../model/held-results.ts';
import { usageBands } from '../model/usage-bands.ts';
import type { Db } from '../store/db.ts';
import type { GuardDecision } from '../model/guard.ts';
import { guardDecisionsOf } from '../store/guard-decisions.ts';
import {
  stripCalls,
  stripCompactions,
  stripConversations,
  stripFindings,
  type StripRow,
  type StripScope,
} from '../store/strip-rows.ts';
import type { Strip as StripAnswer } from './answers/strip.ts';
import { markedCalls } from './strip-marks.ts';

export type { StripScope } from '../store/strip-rows.ts';

/** The most calls one strip returns (the first ones, in start order). */
export const MAX_STRIP_CALLS = 100_000;

/** A small dictionary of repeated strings: the columns hold indexes into it (-1 for none). */
class Dictionary {
  readonly values: string[] = [];
  private readonly index = new Map<string, number>();
  of(value: string | null): number {
    if (value === null) return -1;
    let i = this.index.get(value);
    if (i === undefined) {
      i = this.values.length;
      this.values.push(value);
      this.index.set(value, i);
    }
    return i;
  }
}

/** The strip as src/reading/answers/strip.ts describes it, less what the route adds. */
export type Strip = Omit<StripAnswer, 'id' | 'scope' | 'thresholds' | 'bands'>;
export type StripStream = Strip['streams'][number];
export type StripColumns = Strip['columns'];
/**
 * A finding on the strip: `index` is the call its text is about (context_too_full: the fullest
 * call; else the call it is anchored on), null when that call is not in the strip.
 */
export type StripMark = Strip['findings'][number];
/**
 * A decision of Claude Code's tool-result guard, on the call that first carried what it acted
 * on: the first call (not a side call) of the conversation starting at or after the decision (a
 * Read is narrowed before it runs, a result warned about right after; the model's next request
 * carries it). `index` is null when that call is not in the strip.
 */
export type StripGuardMark = Strip['guard'][number];

/** The strip index of the call each decision acted on (see {@link StripGuardMark}). */
function guardMarks(
  decisions: readonly GuardDecision[],
  calls: readonly StripRow[],
): StripGuardMark[] {
  return decisions.map((d) => {
    const at = BigInt(d.atNs);
    const index = calls.findIndex(
      (row) => row[5] === null && BigInt(row[2]) >= at && conversationOf(row, d.conversationId),
    );
    return {
      index: index === -1 ? null : index,
      action: d.action,
      tool: d.tool,
      resultTokens: d.resultTokens,
      budgetTokens: d.budgetTokens,
      keptOutTokens: d.keptOutTokens,
    };
  });
}

/** A call's stream key is its conversation id and agent (`streamKeyOf`, src/ingest/conversation.ts). */
const conversationOf = (row: StripRow, conversationId: string) =>
  row[3] === conversationId || row[3].startsWith(`${conversationId}|`);

/**
 * A call's input parts in tokens: the sizes scaled to its usage, rest as messages or other.
 * `tools` are the tool results its input holds as counted (else the parts' own).
 */
function partPairs(
  parts: InputParts | null,
  context: number | null,
  names: Dictionary,
  tools: ToolSizes = parts?.tools ?? {},
): number[] | null {
  if (!parts || context === null || context <= 0) return null;
  const total = parts.total ?? (parts.unit === 'tokens' ? context : null);
  if (total === null || total <= 0) return null;
  const scale = context / total;
  const pairs: number[] = [];
  let named = 0;
  if (parts.system !== null && parts.system > 0) {
    const tokens = Math.round(parts.system * scale);
    pairs.push(names.of('system'), tokens);
    named += tokens;
  }
  for (const [tool, size] of Object.entries(tools)) {
    if (!(size > 0)) continue;
    const tokens = Math.round(size * scale);
    pairs.push(names.of(`tool:${tool}`), tokens);
    named += tokens;
  }
  const rest = context - named;
  // sizes measured from the messages cover the whole input; tool spans and estimates do not
  if (rest > 0) pairs.push(names.of(parts.source === 'messages' ? 'messages' : 'other'), rest);
  return pairs;
}

const nsToMs = (ns: string | number | bigint): number => Number(BigInt(ns) / 1000n) / 1000;

/** The calls and the compactions of their streams in the detectors' order (a compaction first at the same ns). */
function* timelineOf(
  calls: readonly StripRow[],
  compactions: ReadonlyArray<{ streamKey: string; atNs: string }>,
): Generator<HeldItem> {
  let next = 0;
  for (const row of calls) {
    const ns = BigInt(row[2]);
    while (next < compactions.length && BigInt(compactions[next]!.atNs) <= ns)
      yield { type: 'compaction', streamKey: compactions[next++]!.streamKey };
    yield {
      type: 'call',
      streamKey: row[3],
      sideCall: row[5],
      contextTokens: row[11],
      parts: row[15],
    };
  }
}

/** The strip of a conversation or run; undefined when it has neither calls nor findings. */
export async function loadStrip(
  db: Db,
  workspaceId: string,
  scope: StripScope,
  limit = MAX_STRIP_CALLS,
): Promise<Strip | undefined> {
  const rows = await stripCalls(db, workspaceId, scope, limit + 1);
  const findingRows = await stripFindings(db, workspaceId, scope);
  if (rows.length === 0 && findingRows.length === 0) return undefined;

  const truncated = rows.length > limit;
  const calls = truncated ? rows.slice(0, limit) : rows;
  // only streams whose parts are each call's new tool results need the compactions
  const compactions = calls.some((row) => row[15]?.source === 'tool_spans')
    ? await stripCompactions(db, workspaceId, scope)
    : [];
  // held results empty at a fall in usage that counts as lost history: the workspace's thresholds
  const { thresholds } = await getAlertSettings(db, workspaceId);
  const counted = heldPerCall(timelineOf(calls, compactions), thresholds);
  const models = new Dictionary();
  const windowSources = new Dictionary();
  const finishReasons = new Dictionary();
  const sideCalls = new Dictionary();
  const partNames = new Dictionary();
  const streams: StripStream[] = [];
  const streamIndex = new Map<string, number>();
  const callIndex = new Map<string, number>();
  const first = calls[0];
  const t0 = first ? nsToMs(first[2]) : 0;
  const columns: StripColumns = {
    startMs: [],
    model: [],
    input: [],
    cacheRead: [],
    cacheWrite: [],
    output: [],
    context: [],
    window: [],
    windowSource: [],
    finish: [],
    stream: [],
    side: [],
    parts: [],
  };
  calls.forEach((row, i) => {
    const [traceId, spanId, startNs, streamKey, agentId, side, model] = row;
    callIndex.set(`${traceId}:${spanId}`, i);
    let s = streamIndex.get(streamKey);
    if (s === undefined) {
      s = streams.length;
      streams.push({ key: streamKey, agentId });
      streamIndex.set(streamKey, s);
    }
    columns.startMs.push(Math.round((nsToMs(startNs) - t0) * 1000) / 1000);
    columns.model.push(models.of(model));
    columns.input.push(row[7]);
    columns.cacheRead.push(row[8]);
    columns.cacheWrite.push(row[9]);
    columns.output.push(row[10]);
    columns.context.push(row[11]);
    columns.window.push(row[12]);
    columns.windowSource.push(windowSources.of(row[13]));
    columns.finish.push(finishReasons.of(row[14]));
    columns.stream.push(s);
    columns.side.push(sideCalls.of(side));
    columns.parts.push(partPairs(row[15], row[11], partNames, counted[i]?.tools));
  });

  const indexOf = (traceId: string, spanId: string) => callIndex.get(`${traceId}:${spanId}`);
  const findings: StripMark[] = findingRows.map((f) => {
    const details = f.details;
    const lost = details['tokensLost'];
    const anchor = indexOf(f.traceId, f.spanId) ?? null;
    return {
      findingId: f.id,
      ...markedCalls(f.detector, details, anchor, indexOf),
      detector: f.detector,
      severity: f.severity,
      kind: f.kind,
      tokensLost: typeof lost === 'number' ? lost : null,
      summary: f.summary,
    };
  });
  findings.sort((a, b) => (a.index ?? calls.length) - (b.index ?? calls.length));

  return {
    calls: calls.length,
    truncated,
    startedAt: first ? Math.round(t0) : null,
    models: models.values,
    windowSources: windowSources.values,
    finishReasons: finishReasons.values,
    sideCalls: sideCalls.values,
    streams,
    parts: partNames.values,
    columns,
    findings,
    guard: guardMarks(
      await guardDecisionsOf(db, workspaceId, await stripConversations(db, workspaceId, scope)),
      calls,
    ),
  };
}

/**
 * The strip as GET /api/conversations/:id/strip and /api/runs/:id/strip answer it: with the
 * usage thresholds to draw and the colour bands of a call's usage share, from the workspace's
 * knobs (src/model/usage-bands.ts); undefined when the conversation or run has no calls.
 */
export async function loadStripView(db: Db, workspaceId: string, id: string, scope: StripScope) {
  const strip = await loadStrip(db, workspaceId, scope);
  if (!strip) return undefined;
  const { thresholds } = await getAlertSettings(db, workspaceId);
  return {
    id,
    scope: 'conversationId' in scope ? ('conversation' as const) : ('run' as const),
    ...strip,
    thresholds: {
      usageThreshold: thresholds.usageThreshold,
      usageCritical: thresholds.usageCritical,
    },
    bands: usageBands(thresholds),
  };
}
