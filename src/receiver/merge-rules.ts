/**
 * One call, one row; one compaction, one row (DESIGN §5): the rules by which the receiver merges
 * what several sources say of the same LLM request or the same compaction. Pure functions: they
 * take the stored rows the store read and say what to write; the reads and writes are SQL in
 * src/store/ingest.ts, run in order by ./merge-writes.ts.
 *
 * Calls, keyed by the request id (Claude Code's `request_id` on spans and log events, a
 * transcript line's `requestId`). Sources rank: telemetry spans > log events > imports
 * (transcripts). The row takes the identity (trace, span, start) and fields of its best source;
 * an import only fills what telemetry lacks ({@link fillFromImport}), and what it said is kept
 * beside the row (`llm_calls.imported`) so that the row is the same whatever the order the
 * sources arrive in ({@link planCallMerge}, {@link finishCallMerge}); the findings anchored on a
 * replaced row follow it ({@link reanchoredFinding}).
 *
 * Compactions, keyed by conversation, stream, kind and time: sources of different evidence
 * (Claude Code's `compaction` log event, the hook's span, the transcript's `compact_boundary`)
 * within {@link SAME_COMPACTION_NS} of each other, with the same trigger (or, when a trigger is
 * unknown, the same tokens before), are one compaction ({@link sameCompaction}); each field is
 * taken from the best source that has it ({@link mergeCompaction}, {@link planCompactions}).
 */
import type { Compaction, CompactionEvidence, InputParts, LlmCall } from '../model/calls.ts';
import type { IngestMark } from '../store/conversations.ts';
import type { CallRow, CompactionRow, FindingRefs } from '../store/ingest.ts';
import { toCompaction, toLlmCall } from '../store/timeline.ts';

/** What an import said of a call: the fields it may fill on a telemetry row. */
export type ImportedCall = Pick<
  LlmCall,
  | 'requestModel'
  | 'responseModel'
  | 'inputTokensRaw'
  | 'cacheReadTokens'
  | 'cacheWriteTokens'
  | 'outputTokens'
  | 'contextTokens'
  | 'usageRule'
  | 'contextWindow'
  | 'windowSource'
  | 'agentVersion'
  | 'finishReasonRaw'
  | 'finishClass'
  | 'outputToolCall'
  | 'outputToolName'
  | 'maxOutputTokens'
  | 'parts'
  | 'sideCall'
  | 'compacted'
>;

/** The fields of an imported call kept on the telemetry row (llm_calls.imported). */
export function importedOf(call: LlmCall): ImportedCall {
  return {
    requestModel: call.requestModel,
    responseModel: call.responseModel,
    inputTokensRaw: call.inputTokensRaw,
    cacheReadTokens: call.cacheReadTokens,
    cacheWriteTokens: call.cacheWriteTokens,
    outputTokens: call.outputTokens,
    contextTokens: call.contextTokens,
    usageRule: call.usageRule,
    contextWindow: call.contextWindow,
    windowSource: call.windowSource,
    agentVersion: call.agentVersion ?? null,
    finishReasonRaw: call.finishReasonRaw,
    finishClass: call.finishClass,
    outputToolCall: call.outputToolCall,
    outputToolName: call.outputToolName,
    maxOutputTokens: call.maxOutputTokens,
    parts: call.parts,
    sideCall: call.sideCall,
    compacted: call.compacted,
  };
}

/** An `llm_calls.imported` value read back (null when absent or not an object). */
export function readImported(value: unknown): ImportedCall | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const v = value as Partial<ImportedCall>;
  const or = <T>(x: T | undefined): T | null => (x === undefined ? null : x);
  return {
    requestModel: or(v.requestModel),
    responseModel: or(v.responseModel),
    inputTokensRaw: or(v.inputTokensRaw),
    cacheReadTokens: or(v.cacheReadTokens),
    cacheWriteTokens: or(v.cacheWriteTokens),
    outputTokens: or(v.outputTokens),
    contextTokens: or(v.contextTokens),
    usageRule: or(v.usageRule),
    contextWindow: or(v.contextWindow),
    windowSource: or(v.windowSource),
    agentVersion: or(v.agentVersion),
    finishReasonRaw: or(v.finishReasonRaw),
    finishClass: or(v.finishClass),
    outputToolCall: or(v.outputToolCall),
    outputToolName: or(v.outputToolName),
    maxOutputTokens: or(v.maxOutputTokens),
    parts: or(v.parts),
    sideCall: or(v.sideCall),
    compacted: v.compacted === true,
  };
}

/**
 * A telemetry call with what only the import knew: each field telemetry left unknown, taken
 * from the import; the token counts (and the window derived from them) and the finish reason
 * as groups, never mixed; `outputToolCall` true when either says so (a transcript holds the
 * cut tool_use block a plain span only hints at). The import's parts are estimates from the
 * messages, held across calls; they are used only where `importedParts` (telemetry has no part
 * sizes of its own for the conversation: no logged tool results) and the call has none.
 */
export function fillFromImport(
  call: LlmCall,
  imported: ImportedCall,
  importedParts: boolean,
): LlmCall {
  const usage =
    call.contextTokens === null && imported.contextTokens !== null
      ? {
          inputTokensRaw: imported.inputTokensRaw,
          cacheReadTokens: imported.cacheReadTokens,
          cacheWriteTokens: imported.cacheWriteTokens,
          outputTokens: imported.outputTokens,
          contextTokens: imported.contextTokens,
          usageRule: imported.usageRule,
        }
      : { outputTokens: call.outputTokens ?? imported.outputTokens };
  const window =
    call.contextWindow === null && imported.contextWindow !== null
      ? { contextWindow: imported.contextWindow, windowSource: imported.windowSource }
      : {};
  const finish =
    call.finishReasonRaw === null && call.finishClass === null
      ? { finishReasonRaw: imported.finishReasonRaw, finishClass: imported.finishClass }
      : {};
  const toolCall =
    call.outputToolCall === true || imported.outputToolCall === true
      ? true
      : (call.outputToolCall ?? imported.outputToolCall);
  return {
    ...call,
    requestModel: call.requestModel ?? imported.requestModel,
    responseModel: call.responseModel ?? imported.responseModel,
    ...usage,
    ...window,
    agentVersion: call.agentVersion ?? imported.agentVersion,
    ...finish,
    outputToolCall: toolCall,
    outputToolName: call.outputToolName ?? imported.outputToolName,
    maxOutputTokens: call.maxOutputTokens ?? imported.maxOutputTokens,
    parts: call.parts ?? (importedParts ? imported.parts : null),
    sideCall: call.sideCall ?? imported.sideCall,
    compacted: call.compacted || imported.compacted,
  };
}

/** True when `parts` are the import's estimates (dropped once logged results size the call). */
export function isImportedParts(parts: InputParts | null, imported: ImportedCall | null): boolean {
  return (
    parts !== null &&
    imported?.parts != null &&
    parts.source === 'estimated' &&
    canonicalJson(parts) === canonicalJson(imported.parts)
  );
}

/** JSON with object keys sorted: compares values read back from jsonb with fresh ones. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : v,
  );
}

/** The fields a merge may change on a call row: equal means no update is needed. */
export function sameMergedFields(a: LlmCall, b: LlmCall): boolean {
  return canonicalJson(importedOf(a)) === canonicalJson(importedOf(b));
}

// ---------------------------------------------------------------------------------------------
// Compactions

/** How far apart (ns) two sources of one compaction may be: the post-compaction hooks run between them. */
export const SAME_COMPACTION_NS = 30_000_000_000n;

/** When triggers cannot tell, two sources' tokens before within this share are the same compaction. */
const SAME_TOKENS_SHARE = 0.05;

/** What one source said of a compaction (an element of `compactions.sources`). */
export interface CompactionSource {
  evidence: CompactionEvidence;
  sourceKey: string;
  atNs: string;
  kind: Compaction['kind'];
  trigger: Compaction['trigger'];
  tokensBefore: number | null;
  tokensAfter: number | null;
  messagesKept: number | null;
  summarySize: number | null;
  summary: string | null;
  traceId: string | null;
  spanId: string | null;
  streamKey: string;
  runId: string;
}

export function sourceOf(c: Compaction): CompactionSource {
  return {
    evidence: c.evidence,
    sourceKey: c.sourceKey,
    atNs: c.atNs,
    kind: c.kind,
    trigger: c.trigger,
    tokensBefore: c.tokensBefore,
    tokensAfter: c.tokensAfter,
    messagesKept: c.messagesKept,
    summarySize: c.summarySize,
    summary: c.summary,
    traceId: c.traceId,
    spanId: c.spanId,
    streamKey: c.streamKey,
    runId: c.runId,
  };
}

/** Reads `compactions.sources` back (fields absent from the jsonb are null). */
export function readSources(value: unknown): CompactionSource[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item): CompactionSource[] => {
    if (item === null || typeof item !== 'object') return [];
    const s = item as Record<string, unknown>;
    const str = (k: string) => (typeof s[k] === 'string' ? (s[k] as string) : null);
    const num = (k: string) => (s[k] === null || s[k] === undefined ? null : Number(s[k]));
    const evidence = str('evidence');
    const sourceKey = str('sourceKey');
    const atNs = s['atNs'] === undefined || s['atNs'] === null ? null : String(s['atNs']);
    if (evidence === null || sourceKey === null || atNs === null) return [];
    return [
      {
        evidence: evidence as CompactionEvidence,
        sourceKey,
        atNs,
        kind: (str('kind') ?? 'summarize') as Compaction['kind'],
        trigger: str('trigger') as Compaction['trigger'],
        tokensBefore: num('tokensBefore'),
        tokensAfter: num('tokensAfter'),
        messagesKept: num('messagesKept'),
        summarySize: num('summarySize'),
        summary: str('summary'),
        traceId: str('traceId'),
        spanId: str('spanId'),
        streamKey: str('streamKey') ?? '',
        runId: str('runId') ?? '',
      },
    ];
  });
}

/**
 * Which source a merged compaction takes a field from, best first: Claude Code's own
 * structured event, then the transcript's boundary, then spans (the hook's, custom ones), then
 * the weaker markers.
 */
const EVIDENCE_ORDER: readonly CompactionEvidence[] = [
  'claude_code_event',
  'transcript_boundary',
  'span',
  'span_event',
  'claude_code_side_call',
  'flag',
  'message_part',
  'finish_reason',
];

/**
 * For the sizes of the history (tokens before, messages kept, the summary), the transcript is
 * the better witness: after `--resume`, Claude Code's event counts only what it reloaded (pre
 * 749 where the transcript and the last call say 14,040, harness README surprise 6).
 */
const HISTORY_ORDER: readonly CompactionEvidence[] = [
  'transcript_boundary',
  ...EVIDENCE_ORDER.filter((e) => e !== 'transcript_boundary'),
];

const rankIn = (order: readonly CompactionEvidence[], e: CompactionEvidence) => {
  const i = order.indexOf(e);
  return i < 0 ? order.length : i;
};

/** Sources best first (evidence order, then time, then key): the order `sources` is stored in. */
export function sortSources(sources: readonly CompactionSource[]): CompactionSource[] {
  return [...sources].sort(
    (a, b) =>
      rankIn(EVIDENCE_ORDER, a.evidence) - rankIn(EVIDENCE_ORDER, b.evidence) ||
      compareNs(a.atNs, b.atNs) ||
      (a.sourceKey < b.sourceKey ? -1 : a.sourceKey > b.sourceKey ? 1 : 0),
  );
}

function compareNs(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

const absNs = (a: string, b: string) => {
  const d = BigInt(a) - BigInt(b);
  return d < 0n ? -d : d;
};

/** The first non-null value of `pick` among the sources, in `order`. */
function firstOf<T>(
  sources: readonly CompactionSource[],
  order: readonly CompactionEvidence[],
  pick: (s: CompactionSource) => T | null,
): T | null {
  const ranked = [...sources].sort((a, b) => rankIn(order, a.evidence) - rankIn(order, b.evidence));
  for (const s of ranked) {
    const v = pick(s);
    if (v !== null) return v;
  }
  return null;
}

/**
 * Whether `incoming` is another source of the compaction whose sources are `sources` (all of
 * one conversation): the same stream and kind, an evidence the compaction has no source of yet
 * (one source never reports one compaction twice), within {@link SAME_COMPACTION_NS} of every
 * source, and the same trigger; when either trigger is unknown, the same tokens before (within
 * 5%) when both are known. Tokens before alone never rule a match out when the triggers agree:
 * Claude Code's sources disagree on them (see HISTORY_ORDER).
 */
export function sameCompaction(
  sources: readonly CompactionSource[],
  incoming: Compaction,
): boolean {
  if (sources.length === 0) return false;
  const merged = mergeCompaction(sources, { workspaceId: '', conversationId: '' });
  if (merged.streamKey !== incoming.streamKey || merged.kind !== incoming.kind) return false;
  if (sources.some((s) => s.evidence === incoming.evidence)) return false;
  if (sources.some((s) => absNs(s.atNs, incoming.atNs) > SAME_COMPACTION_NS)) return false;
  if (merged.trigger !== null && incoming.trigger !== null)
    return merged.trigger === incoming.trigger;
  const a = merged.tokensBefore;
  const b = incoming.tokensBefore;
  if (a === null || b === null) return true;
  return Math.abs(a - b) <= Math.max(a, b) * SAME_TOKENS_SHARE;
}

/** How close `incoming` is to a compaction: the nearest of its sources (ns). */
export function distanceNs(sources: readonly CompactionSource[], incoming: Compaction): bigint {
  let best: bigint | null = null;
  for (const s of sources) {
    const d = absNs(s.atNs, incoming.atNs);
    if (best === null || d < best) best = d;
  }
  return best ?? 0n;
}

/**
 * The compaction its sources describe: the time of the earliest source (every source reports
 * the compaction done, the earliest is the surest to come before the call after it), each other
 * field from the best source that has it (history sizes from the transcript first), the
 * evidence and source key of the best source.
 */
export function mergeCompaction(
  sources: readonly CompactionSource[],
  where: { workspaceId: string; conversationId: string },
): Compaction {
  const sorted = sortSources(sources);
  const best = sorted[0]!;
  let atNs = best.atNs;
  for (const s of sorted) if (compareNs(s.atNs, atNs) < 0) atNs = s.atNs;
  return {
    workspaceId: where.workspaceId,
    conversationId: where.conversationId,
    streamKey: best.streamKey,
    runId: best.runId,
    traceId: firstOf(sorted, EVIDENCE_ORDER, (s) => s.traceId),
    spanId: firstOf(sorted, EVIDENCE_ORDER, (s) => s.spanId),
    atNs,
    evidence: best.evidence,
    kind: best.kind,
    trigger: firstOf(sorted, EVIDENCE_ORDER, (s) => s.trigger),
    tokensBefore: firstOf(sorted, HISTORY_ORDER, (s) => s.tokensBefore),
    tokensAfter: firstOf(sorted, EVIDENCE_ORDER, (s) => s.tokensAfter),
    messagesKept: firstOf(sorted, HISTORY_ORDER, (s) => s.messagesKept),
    summarySize: firstOf(sorted, HISTORY_ORDER, (s) => s.summarySize),
    summary: firstOf(sorted, HISTORY_ORDER, (s) => s.summary),
    sourceKey: best.sourceKey,
  };
}

// ---------------------------------------------------------------------------------------------
// Calls: which rows a batch adds, replaces and updates

/** How calls of several producers that describe one request are stored (decided by the receiver). */
export interface CallPrecedence {
  /** Producers whose calls come from log events and yield to a span of the same request id. */
  logProducers: readonly string[];
  /**
   * Producers whose calls come from session-file imports (transcripts): they yield to telemetry
   * (spans, log events) of the same request id and fill what it lacks ({@link fillFromImport}).
   */
  importProducers?: readonly string[];
  /**
   * Tool-result sources whose sizes become the parts of calls (Claude Code's logged results):
   * in a conversation that has them, an import's estimated parts are not used.
   */
  partsResultSources?: readonly string[];
  /** Quiet time (ms) before evaluation for the conversations of a producer; 0 when absent. */
  settleMs: (producer: string) => number;
}

/** What `insertCalls` (./merge-writes.ts) tells the caller beyond the marks. */
export interface CallsOutcome {
  /**
   * Calls whose import-estimated parts were dropped because logged tool results size them
   * now: the caller joins the logged results to them (./logged-tool-parts.ts).
   */
  partsDropped: LlmCall[];
  /** Calls whose request had a row of another source already (merged with it, not added). */
  merged: number;
}

/** A call that replaces stored rows of its request, with what an import said of it. */
export interface Replacement {
  call: LlmCall;
  rows: CallRow[];
  imported: ImportedCall | null;
}

/** A stored row a worse source merges into, with its new fields and what an import said. */
export interface MergedUpdate {
  row: CallRow;
  call: LlmCall;
  imported: ImportedCall | null;
}

/** The first step of merging a batch's calls with the stored rows of their requests. */
export interface CallMergePlan {
  /** Calls no stored row describes (or of the same rank as the stored ones): inserted as they are. */
  fresh: LlmCall[];
  /** Rows replaced by a better source, with the call replacing them and what an import said. */
  replacing: Replacement[];
  /** Rows a worse source merges into, with the row's new fields given whether imported parts count. */
  merging: Array<{
    row: CallRow;
    imported: ImportedCall | null;
    call: (importedParts: boolean) => LlmCall;
  }>;
  /** Calls whose request had a row of another source already. */
  merged: number;
}

/** A call row's identity: its primary key. */
const sameRow = (row: CallRow, call: LlmCall) =>
  row.trace_id === call.traceId &&
  row.span_id === call.spanId &&
  String(row.start_ns) === call.startNs;

const minNs = (a: string, b: string) => (BigInt(a) <= BigInt(b) ? a : b);

/** A producer's rank: telemetry spans (3) > log events (2) > imports (1). */
export function rankOf(precedence: CallPrecedence): (producer: string) => number {
  const imports = precedence.importProducers ?? [];
  return (producer) =>
    imports.includes(producer) ? 1 : precedence.logProducers.includes(producer) ? 2 : 3;
}

/** The row a source of its request merges with: the best-ranked, then the earliest. */
function bestRow(
  rows: readonly CallRow[],
  rank: (producer: string) => number,
): CallRow | undefined {
  let best: CallRow | undefined;
  for (const row of rows) {
    if (best === undefined) {
      best = row;
      continue;
    }
    const d = rank(row.producer) - rank(best.producer);
    const earlier = BigInt(row.start_ns) < BigInt(best.start_ns);
    if (d > 0 || (d === 0 && earlier)) best = row;
  }
  return best;
}

/**
 * What the calls of a batch do to the stored rows of their requests (`existing`, read by
 * request id). One LLM call is one row whatever brought it:
 * - a re-sent call (a row with its identity exists) does nothing;
 * - a better source (span > log event > import) replaces the rows of worse ones: the row takes
 *   its identity and fields, keeps the log event's side-call reason and cost and what an import
 *   said (and read), and the findings anchored on the old rows follow it;
 * - a worse source merges into the row of a better one: a log event adds nothing (its side
 *   call comes through `markSideCalls`) but drops an import's estimated parts, an import fills
 *   what telemetry lacks;
 * - a source of the same rank with another identity is stored beside it, as before.
 */
export function planCallMerge(
  calls: readonly LlmCall[],
  existing: readonly CallRow[],
  precedence: CallPrecedence,
): CallMergePlan {
  const imports = precedence.importProducers ?? [];
  const rank = rankOf(precedence);
  const byRequest = new Map<string, CallRow[]>();
  for (const row of existing) {
    const list = byRequest.get(row.request_id!) ?? [];
    list.push(row);
    byRequest.set(row.request_id!, list);
  }
  const plan: CallMergePlan = { fresh: [], replacing: [], merging: [], merged: 0 };
  for (const call of calls) {
    const rows = call.requestId === null ? [] : (byRequest.get(call.requestId) ?? []);
    if (rows.some((row) => sameRow(row, call))) continue; // re-sent
    const own = rank(call.producer);
    const best = bestRow(rows, rank);
    if (best === undefined || rank(best.producer) === own) {
      plan.fresh.push(call);
      continue;
    }
    plan.merged += 1;
    if (rank(best.producer) < own) {
      const worse = rows.filter((row) => rank(row.producer) < own);
      const imported = worse.find((row) => imports.includes(row.producer));
      const said: ImportedCall | null = imported
        ? importedOf(toLlmCall(imported))
        : (worse.map((row) => readImported(row.imported)).find((x) => x !== null) ?? null);
      // the log event said it was a side call (Claude Code `query_source`); the span may not
      const sideCall =
        call.sideCall ?? worse.find((row) => row.side_call !== null)?.side_call ?? null;
      // the log event said what it cost (Claude Code `cost_usd`); the span does not
      const costUsd = call.costUsd ?? worse.find((row) => row.cost_usd !== null)?.cost_usd ?? null;
      // the messages an import read stay with the row when telemetry did not capture them
      const kept = call.inputMessages ?? storedMessages(worse);
      plan.replacing.push({
        call: { ...call, sideCall, costUsd, ...(kept ? { inputMessages: kept } : {}) },
        rows: worse,
        imported: said,
      });
      continue;
    }
    const row = best;
    const stored = toLlmCall(row);
    const storedImport = readImported(row.imported);
    if (imports.includes(call.producer)) {
      const imported = importedOf(call);
      // the messages an import read (a transcript at a drop) fill a row that has none
      const messages = row.input_messages === null ? call.inputMessages : undefined;
      if (
        storedImport !== null &&
        canonicalJson(storedImport) === canonicalJson(imported) &&
        messages === undefined
      )
        continue;
      plan.merging.push({
        row,
        imported,
        call: (parts) => ({
          ...fillFromImport(stored, imported, parts),
          ...(messages ? { inputMessages: messages } : {}),
        }),
      });
    } else if (isImportedParts(stored.parts, storedImport)) {
      // a log event of a call whose parts an import estimated: logged results size it now
      plan.merging.push({ row, imported: storedImport, call: () => ({ ...stored, parts: null }) });
    }
  }
  return plan;
}

/**
 * The conversations whose logged tool results decide whether an import's parts count (an
 * import's parts count only where telemetry sizes nothing): none when no import's parts are at
 * stake, so no query is needed.
 */
export function conversationsToCheckForResults(plan: CallMergePlan): string[] {
  const withImport = [
    ...plan.replacing.filter((r) => r.imported?.parts != null && r.call.parts === null),
    ...plan.merging.filter((m) => m.imported?.parts != null),
  ];
  if (withImport.length === 0) return [];
  return [
    ...plan.replacing.map((r) => r.call.conversationId),
    ...plan.merging.map((m) => m.row.conversation_id),
  ];
}

/** What merging a batch's calls writes, once the conversations with logged results are known. */
export interface CallMergeWrites {
  /** Rows replaced by better sources: deleted, their replacements inserted. */
  gone: CallRow[];
  replacements: Replacement[];
  /** Stored rows whose merged fields (or import, or messages) changed. */
  updates: MergedUpdate[];
  /** Marks of the conversations whose updated rows changed what the detectors read. */
  marks: IngestMark[];
  /** Updated calls whose import-estimated parts were dropped (see CallsOutcome). */
  partsDropped: LlmCall[];
}

/**
 * The second step: the replacements filled from what imports said, and the updates of the rows
 * worse sources merge into (unchanged rows left out). `logged` holds the conversations with
 * tool results of `partsResultSources`: there an import's estimated parts are not used.
 */
export function finishCallMerge(
  plan: CallMergePlan,
  logged: ReadonlySet<string>,
  precedence: CallPrecedence,
): CallMergeWrites {
  const importedParts = (conversationId: string, producer: string) =>
    !precedence.logProducers.includes(producer) && !logged.has(conversationId);
  const replacements = plan.replacing.map(({ call, rows, imported }) => ({
    call:
      imported === null
        ? call
        : fillFromImport(
            call,
            imported,
            importedParts(call.conversationId, call.producer) &&
              !rows.some((row) => precedence.logProducers.includes(row.producer)),
          ),
    rows,
    imported,
  }));
  const updates: MergedUpdate[] = [];
  const marks: IngestMark[] = [];
  const partsDropped: LlmCall[] = [];
  for (const m of plan.merging) {
    const call = m.call(importedParts(m.row.conversation_id, m.row.producer));
    const stored = toLlmCall(m.row);
    const changed = !sameMergedFields(stored, call);
    const messages = m.row.input_messages === null && call.inputMessages !== undefined;
    if (
      !changed &&
      !messages &&
      canonicalJson(readImported(m.row.imported)) === canonicalJson(m.imported)
    )
      continue;
    updates.push({ row: m.row, call, imported: m.imported });
    if (changed)
      marks.push({ conversationId: stored.conversationId, fromNs: stored.startNs, calls: 0 });
    if (stored.parts !== null && call.parts === null) partsDropped.push(call);
  }
  return { gone: replacements.flatMap((r) => r.rows), replacements, updates, marks, partsDropped };
}

/**
 * The marks of replaced rows: each replacing call's conversation from the earliest start
 * involved (with its producer's settle time), and the conversation of a replaced row that was
 * another one from that row's start, so the evaluator replays them.
 */
export function replacementMarks(
  replacements: readonly Replacement[],
  settleMs: (producer: string) => number,
): IngestMark[] {
  const marks: IngestMark[] = [];
  for (const { call, rows } of replacements) {
    let fromNs = call.startNs;
    for (const row of rows) {
      fromNs = minNs(fromNs, String(row.start_ns));
      if (row.conversation_id !== call.conversationId)
        marks.push({ conversationId: row.conversation_id, fromNs: String(row.start_ns), calls: 0 });
    }
    marks.push({
      conversationId: call.conversationId,
      fromNs,
      calls: 0,
      // the replacing call is a new row: its conversation's range of call starts holds it
      callStarts: { fromNs: call.startNs, toNs: call.startNs },
      settleMs: settleMs(call.producer),
    });
  }
  return marks;
}

/** The messages stored with the first of `rows` that has them (an import's, at a drop). */
function storedMessages(rows: readonly CallRow[]): Record<string, unknown> | undefined {
  const text = rows.find((row) => row.input_messages !== null)?.input_messages;
  if (!text) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Findings on replaced rows

/** A call row that another source's row replaced, and the row replacing it. */
export interface Reanchor {
  conversationId: string;
  from: { traceId: string; spanId: string };
  to: { traceId: string; spanId: string };
}

/** The moves of findings the replacements make: one per replaced row whose identity changes. */
export function reanchorMoves(replacements: readonly Replacement[]): Reanchor[] {
  return replacements
    .flatMap(({ call, rows }) =>
      rows.map((row) => ({
        conversationId: row.conversation_id,
        from: { traceId: row.trace_id, spanId: row.span_id },
        to: { traceId: call.traceId, spanId: call.spanId },
      })),
    )
    .filter((m) => m.from.traceId !== m.to.traceId || m.from.spanId !== m.to.spanId);
}

/**
 * A finding anchored on replaced call rows, moved to the rows that replaced them: the finding's
 * call, its anchor (anchors name calls by `traceId:spanId`, tool_takeover by the span id of an
 * episode's first call) and the calls its details list. So the evaluator's replay of the merged
 * rows finds the findings it made before, and never makes (or sends) them again. Null when
 * neither its anchor nor its call moves.
 */
export function reanchoredFinding(
  row: FindingRefs,
  moves: readonly Reanchor[],
): { anchor: string; traceId: string; spanId: string; details: unknown } | null {
  let anchor = row.anchor;
  let traceId = row.trace_id;
  let spanId = row.span_id;
  let details = row.details as unknown;
  for (const { from, to } of moves) {
    anchor = anchor
      .replaceAll(`${from.traceId}:${from.spanId}`, `${to.traceId}:${to.spanId}`)
      .replaceAll(from.spanId, to.spanId);
    if (traceId === from.traceId && spanId === from.spanId) {
      traceId = to.traceId;
      spanId = to.spanId;
    }
    details = moveCallRefs(details, from, to);
  }
  if (anchor === row.anchor && traceId === row.trace_id && spanId === row.span_id) return null;
  return { anchor, traceId, spanId, details };
}

/** `value` with every `{ traceId, spanId }` naming `from` naming `to` instead. */
function moveCallRefs(
  value: unknown,
  from: { traceId: string; spanId: string },
  to: { traceId: string; spanId: string },
): unknown {
  if (Array.isArray(value)) return value.map((v) => moveCallRefs(v, from, to));
  if (value === null || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = moveCallRefs(v, from, to);
  if (o.traceId === from.traceId && o.spanId === from.spanId) {
    out.traceId = to.traceId;
    out.spanId = to.spanId;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Compactions: which rows a batch adds and changes

/** The times the stored compactions a batch may join lie within (ns, inclusive). */
export function compactionWindow(compactions: readonly Compaction[]): {
  fromNs: string;
  toNs: string;
} {
  let lo = BigInt(compactions[0]!.atNs);
  let hi = lo;
  for (const c of compactions) {
    const ns = BigInt(c.atNs);
    if (ns < lo) lo = ns;
    if (ns > hi) hi = ns;
  }
  return { fromNs: String(lo - SAME_COMPACTION_NS), toNs: String(hi + SAME_COMPACTION_NS) };
}

/** What merging a batch's compactions writes. */
export interface CompactionWrites {
  /** New rows: the merged compaction and its sources, best first. */
  inserts: Array<{ compaction: Compaction; sources: CompactionSource[] }>;
  /** Stored rows another source joined, with a mark when what they say changed. */
  updates: Array<{
    id: CompactionRow['id'];
    compaction: Compaction;
    sources: CompactionSource[];
    mark: IngestMark | null;
  }>;
}

/**
 * Each incoming compaction either is a re-sent source of a stored one (nothing to do), joins
 * the nearest stored (or earlier in the batch) compaction it is another source of, or is a new
 * row. `stored` holds the batch's conversations' compactions within {@link compactionWindow}.
 */
export function planCompactions(
  workspaceId: string,
  stored: readonly CompactionRow[],
  compactions: readonly Compaction[],
): CompactionWrites {
  interface Working {
    row?: CompactionRow;
    conversationId: string;
    sources: CompactionSource[];
    changed: boolean;
  }
  const working: Working[] = stored.map((row) => {
    const sources = readSources(row.sources);
    return {
      row,
      conversationId: row.conversation_id,
      sources: sources.length > 0 ? sources : [sourceOf(toCompaction(row))],
      changed: false,
    };
  });
  const sorted = [...compactions].sort((a, b) =>
    BigInt(a.atNs) < BigInt(b.atNs) ? -1 : BigInt(a.atNs) > BigInt(b.atNs) ? 1 : 0,
  );
  for (const c of sorted) {
    const mine = working.filter((w) => w.conversationId === c.conversationId);
    if (mine.some((w) => w.sources.some((s) => s.sourceKey === c.sourceKey))) continue; // re-sent
    let best: Working | undefined;
    let bestDistance = 0n;
    for (const w of mine) {
      if (!sameCompaction(w.sources, c)) continue;
      const d = distanceNs(w.sources, c);
      if (best === undefined || d < bestDistance) {
        best = w;
        bestDistance = d;
      }
    }
    if (best) {
      best.sources = sortSources([...best.sources, sourceOf(c)]);
      best.changed = true;
    } else {
      working.push({ conversationId: c.conversationId, sources: [sourceOf(c)], changed: true });
    }
  }

  const where = (w: Working) => ({ workspaceId, conversationId: w.conversationId });
  const writes: CompactionWrites = { inserts: [], updates: [] };
  for (const w of working)
    if (w.row === undefined)
      writes.inserts.push({ compaction: mergeCompaction(w.sources, where(w)), sources: w.sources });
  for (const w of working) {
    if (w.row === undefined || !w.changed) continue;
    const before = toCompaction(w.row);
    const merged = mergeCompaction(w.sources, where(w));
    const changed =
      canonicalJson({ ...before, sourceKey: '' }) !== canonicalJson({ ...merged, sourceKey: '' });
    writes.updates.push({
      id: w.row.id,
      compaction: merged,
      sources: w.sources,
      mark: changed
        ? { conversationId: w.conversationId, fromNs: minNs(before.atNs, merged.atNs), calls: 0 }
        : null,
    });
  }
  return writes;
}
