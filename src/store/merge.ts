/**
 * One call, one row; one compaction, one row (DESIGN §5): the rules by which the store merges
 * what several sources say of the same LLM request or the same compaction. Pure functions; the
 * queries are in ./ingest.ts.
 *
 * Calls, keyed by the request id (Claude Code's `request_id` on spans and log events, a
 * transcript line's `requestId`). Sources rank: telemetry spans > log events > imports
 * (transcripts). The row takes the identity (trace, span, start) and fields of its best source;
 * an import only fills what telemetry lacks ({@link fillFromImport}), and what it said is kept
 * beside the row (`llm_calls.imported`) so that the row is the same whatever the order the
 * sources arrive in.
 *
 * Compactions, keyed by conversation, stream, kind and time: sources of different evidence
 * (Claude Code's `compaction` log event, the hook's span, the transcript's `compact_boundary`)
 * within {@link SAME_COMPACTION_NS} of each other, with the same trigger (or, when a trigger is
 * unknown, the same tokens before), are one compaction ({@link sameCompaction}); each field is
 * taken from the best source that has it ({@link mergeCompaction}).
 */
import type { Compaction, CompactionEvidence, InputParts, LlmCall } from '../model/calls.ts';

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
