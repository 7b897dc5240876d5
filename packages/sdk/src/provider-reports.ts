/**
 * Puts what a provider said about compaction and clearing on the LLM span of the call: a
 * `rotscope.compaction` span event at the span's start (so rotscope places it before the
 * call), with the attributes of DESIGN §5, and for a compaction (not a clear) the standard
 * `gen_ai.conversation.compacted=true`. Adds to the span, never replaces anything on it.
 */
import type { Attributes, HrTime, Span } from '@opentelemetry/api';
import {
  ATTR_COMPACTION_KIND,
  ATTR_COMPACTION_MESSAGES_KEPT,
  ATTR_COMPACTION_SUMMARY,
  ATTR_COMPACTION_SUMMARY_SIZE,
  ATTR_COMPACTION_TOKENS_AFTER,
  ATTR_COMPACTION_TOKENS_BEFORE,
  ATTR_CONVERSATION_COMPACTED,
} from './attributes.js';
import { captureContent } from './config.js';
import type { ProviderClear, ProviderCompaction } from './provider-shapes.js';

/** The span event rotscope reads as a compaction (DESIGN §5). */
export const EVENT_COMPACTION = 'rotscope.compaction';
/** Where the report comes from, e.g. `anthropic.compaction`, `openai.responses.compact`. */
export const ATTR_COMPACTION_SOURCE = 'rotscope.compaction.source';
/** A clear's provider edit type, e.g. `clear_tool_uses_20250919`. */
export const ATTR_COMPACTION_EDIT = 'rotscope.compaction.edit';
/** Input tokens a clear removed. */
export const ATTR_COMPACTION_TOKENS_CLEARED = 'rotscope.compaction.tokens_cleared';
/** Tool uses or thinking turns a clear removed. */
export const ATTR_COMPACTION_ITEMS_CLEARED = 'rotscope.compaction.items_cleared';

/** The event attributes of a provider compaction. */
export function compactionEventAttributes(c: ProviderCompaction): Attributes {
  const a: Attributes = { [ATTR_COMPACTION_KIND]: 'summarize', [ATTR_COMPACTION_SOURCE]: c.source };
  if (c.tokensBefore !== null) a[ATTR_COMPACTION_TOKENS_BEFORE] = c.tokensBefore;
  if (c.tokensAfter !== null) a[ATTR_COMPACTION_TOKENS_AFTER] = c.tokensAfter;
  if (c.messagesKept !== null) a[ATTR_COMPACTION_MESSAGES_KEPT] = c.messagesKept;
  if (c.summary !== null) {
    a[ATTR_COMPACTION_SUMMARY_SIZE] = c.summary.length;
    if (captureContent()) a[ATTR_COMPACTION_SUMMARY] = c.summary;
  }
  return a;
}

/** The event attributes of a clear: tokens before = the input after it plus what it cleared. */
export function clearEventAttributes(c: ProviderClear, contextTokens: number | null): Attributes {
  const a: Attributes = {
    [ATTR_COMPACTION_KIND]: c.kind,
    [ATTR_COMPACTION_SOURCE]: 'anthropic.context_management',
    [ATTR_COMPACTION_EDIT]: c.edit,
    [ATTR_COMPACTION_TOKENS_CLEARED]: c.tokensCleared,
  };
  if (c.itemsCleared !== null) a[ATTR_COMPACTION_ITEMS_CLEARED] = c.itemsCleared;
  if (contextTokens !== null) {
    a[ATTR_COMPACTION_TOKENS_BEFORE] = contextTokens + c.tokensCleared;
    a[ATTR_COMPACTION_TOKENS_AFTER] = contextTokens;
  }
  return a;
}

/** The start time of an OpenTelemetry SDK span, when its implementation exposes it. */
function startTimeOf(span: Span): HrTime | undefined {
  const t = (span as { startTime?: unknown }).startTime;
  return Array.isArray(t) && t.length === 2 && t.every((n) => typeof n === 'number')
    ? (t as HrTime)
    : undefined;
}

/**
 * Reports on `span` (an LLM span still recording): the event at the span's start, and the
 * compacted flag when `compacted`. Without a readable start time the event cannot be placed
 * before the call, so only the flag is set (for a compaction).
 */
export function reportOnSpan(span: Span, attributes: Attributes, compacted: boolean): void {
  if (!span.isRecording()) return;
  const start = startTimeOf(span);
  if (start !== undefined) span.addEvent(EVENT_COMPACTION, attributes, start);
  if (compacted) span.setAttribute(ATTR_CONVERSATION_COMPACTED, true);
}
