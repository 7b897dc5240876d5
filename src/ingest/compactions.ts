/**
 * Compaction markers (conventions §9.8, DESIGN §5): custom compaction spans and span events,
 * the standard `gen_ai.conversation.compacted` flag, compaction message parts and finish
 * reasons. Claude Code log events and transcript boundaries are read in their own modules
 * with `compaction()` below. Every compaction has a `sourceKey` that is stable on re-send.
 */
import type { Compaction } from '../model/calls.ts';
import type { AttrValue, Attributes } from '../model/telemetry.ts';
import { toNum } from './attrs.ts';

/** The fields of a Compaction that {@link compaction} defaults when they are left out. */
type Defaulted =
  'kind' | 'trigger' | 'tokensBefore' | 'tokensAfter' | 'messagesKept' | 'summarySize' | 'summary';

/** Where a compaction belongs and what it says; the rest of the row is defaulted. */
export type CompactionInit = Omit<Compaction, Defaulted> & Partial<Pick<Compaction, Defaulted>>;

/** A Compaction row with defaults (kind `summarize`, unknown counts). */
export function compaction(init: CompactionInit): Compaction {
  return {
    workspaceId: init.workspaceId,
    conversationId: init.conversationId,
    streamKey: init.streamKey,
    runId: init.runId,
    traceId: init.traceId,
    spanId: init.spanId,
    atNs: init.atNs,
    evidence: init.evidence,
    kind: init.kind ?? 'summarize',
    trigger: init.trigger ?? null,
    tokensBefore: init.tokensBefore ?? null,
    tokensAfter: init.tokensAfter ?? null,
    messagesKept: init.messagesKept ?? null,
    summarySize: init.summarySize ?? null,
    summary: init.summary ?? null,
    sourceKey: init.sourceKey,
  };
}

/** `auto` / `manual` from a trigger value (`auto`, `manual`, `user`, `threshold`, ...). */
export function normalizeTrigger(v: AttrValue | undefined): Compaction['trigger'] {
  if (typeof v !== 'string') return null;
  const t = v.toLowerCase();
  if (t === 'manual' || t === 'user' || t === 'command') return 'manual';
  if (t === '') return null;
  return 'auto';
}

/**
 * The kind from a strategy/kind value: clearing tool results, truncation, else summarize.
 * Clearing thinking (Anthropic `clear_thinking_*` context edits) is a clear but not of tool
 * results: `other`.
 */
export function normalizeKind(v: AttrValue | undefined): Compaction['kind'] {
  if (typeof v !== 'string') return 'summarize';
  const k = v.toLowerCase();
  if (k.includes('clear') && k.includes('thinking')) return 'other';
  if (k.includes('clear') || k.includes('tool_result') || k.includes('prune'))
    return 'clear_tool_results';
  if (k.includes('trunc') || k.includes('drop') || k.includes('window')) return 'truncate';
  if (k.includes('summar') || k.includes('compact')) return 'summarize';
  return 'other';
}

/** Numbers and words a custom compaction span or event carries, by key suffix. */
export interface CompactionDetails {
  kind: Compaction['kind'];
  trigger: Compaction['trigger'];
  tokensBefore: number | null;
  tokensAfter: number | null;
  messagesKept: number | null;
  summary: string | null;
  /** The summary's size when only the size was sent (`*summary_size`, content capture off). */
  summarySize: number | null;
}

/**
 * Reads the details of a custom compaction span or event (§1.6): keys ending in
 * `tokens_before`/`before.tokens`/`pre_tokens`, `tokens_after`/`after.tokens`/`post_tokens`,
 * `messages_after`/`messages_kept`, `trigger`, `strategy`/`kind`, `summary`, `summary_size`. Only called for
 * compaction spans and events, so the key scan is off the hot path.
 */
export function readCompactionDetails(attrs: Attributes): CompactionDetails {
  const d: CompactionDetails = {
    kind: 'summarize',
    trigger: null,
    tokensBefore: null,
    tokensAfter: null,
    messagesKept: null,
    summary: null,
    summarySize: null,
  };
  for (const k in attrs) {
    const v = attrs[k];
    const key = k.toLowerCase();
    if (
      key.endsWith('tokens_before') ||
      key.endsWith('before.tokens') ||
      key.endsWith('pre_tokens') ||
      key.endsWith('pretokens')
    ) {
      d.tokensBefore ??= toNum(v);
    } else if (
      key.endsWith('tokens_after') ||
      key.endsWith('after.tokens') ||
      key.endsWith('post_tokens') ||
      key.endsWith('posttokens')
    ) {
      d.tokensAfter ??= toNum(v);
    } else if (
      key.endsWith('messages_after') ||
      key.endsWith('messages_kept') ||
      key.endsWith('after.messages')
    ) {
      d.messagesKept ??= toNum(v);
    } else if (key.endsWith('trigger')) {
      d.trigger ??= normalizeTrigger(v);
    } else if (key.endsWith('strategy') || key.endsWith('compaction.kind') || key === 'kind') {
      d.kind = normalizeKind(v);
    } else if (key.endsWith('summary_size') || key.endsWith('summary.size')) {
      d.summarySize ??= toNum(v);
    } else if (key.endsWith('summary') && typeof v === 'string') {
      d.summary = v;
    }
  }
  return d;
}

/** True for span event names that mark a compaction (`rius.compaction`, `rotscope.compaction`, any `*compaction*`). */
export function isCompactionEventName(name: string): boolean {
  return name.toLowerCase().includes('compaction');
}
