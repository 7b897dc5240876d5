/**
 * `markCompaction`: the application says "I just compacted this conversation's history on
 * purpose". It records a compaction span under the current span and leaves a mark that the
 * next LLM span of the same async context takes (`gen_ai.conversation.compacted=true`), through
 * `RotscopeSpanProcessor`.
 */
import { trace, type Attributes } from '@opentelemetry/api';
import {
  ATTR_COMPACTION_KIND,
  ATTR_COMPACTION_MESSAGES_KEPT,
  ATTR_COMPACTION_SUMMARY,
  ATTR_COMPACTION_SUMMARY_SIZE,
  ATTR_COMPACTION_TOKENS_AFTER,
  ATTR_COMPACTION_TOKENS_BEFORE,
  ATTR_COMPACTION_TRIGGER,
  ATTR_CONVERSATION_ID,
  ATTR_OPERATION_NAME,
  OPERATION_COMPACTION,
} from './attributes.js';
import { captureContent } from './config.js';
import { setPendingMark } from './pending.js';
import { TRACER_NAME, TRACER_VERSION } from './version.js';

/** What was done to the history: summarized, tool results cleared, messages dropped, other. */
export const COMPACTION_KINDS = ['summarize', 'clear_tool_results', 'truncate', 'other'] as const;
export type CompactionKind = (typeof COMPACTION_KINDS)[number];

/** Who asked: the agent on its own (a threshold) or a person (a command). */
export const COMPACTION_TRIGGERS = ['auto', 'manual'] as const;
export type CompactionTrigger = (typeof COMPACTION_TRIGGERS)[number];

/** What a compaction did; every field is optional. */
export interface CompactionMark {
  /** Defaults to `summarize`. */
  kind?: CompactionKind;
  trigger?: CompactionTrigger;
  /** Context size before the compaction, in tokens. */
  tokensBefore?: number;
  /** Context size after the compaction, in tokens. */
  tokensAfter?: number;
  /** How many messages the compacted history keeps. */
  messagesKept?: number;
  /** The summary that replaces the history: its text goes on the span only with content capture on; its size always. */
  summary?: string;
  /** The conversation (`gen_ai.conversation.id`), when the current span does not carry it. */
  conversationId?: string;
}

/** A span's attributes when its implementation exposes them (the OpenTelemetry SDK's spans do). */
export function readableAttributes(span: unknown): Attributes | undefined {
  if (typeof span !== 'object' || span === null) return undefined;
  const attrs = (span as { attributes?: unknown }).attributes;
  return typeof attrs === 'object' && attrs !== null ? (attrs as Attributes) : undefined;
}

function fail(message: string): never {
  throw new TypeError(`@rotscope/sdk markCompaction: ${message}`);
}

function count(name: string, v: unknown): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
    fail(`${name} must be a non-negative integer, got ${JSON.stringify(v)}`);
  }
  return v;
}

function oneOf<T extends string>(name: string, v: unknown, allowed: readonly T[]): T | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    fail(`unknown ${name} ${JSON.stringify(v)}; expected one of ${allowed.join(', ')}`);
  }
  return v as T;
}

/** The checked attributes of a compaction span; throws a TypeError on a bad argument. */
export function compactionAttributes(mark: CompactionMark = {}): Attributes {
  if (typeof mark !== 'object' || mark === null) fail('the argument must be an object');
  const kind = oneOf('kind', mark.kind, COMPACTION_KINDS) ?? 'summarize';
  const trigger = oneOf('trigger', mark.trigger, COMPACTION_TRIGGERS);
  const tokensBefore = count('tokensBefore', mark.tokensBefore);
  const tokensAfter = count('tokensAfter', mark.tokensAfter);
  const messagesKept = count('messagesKept', mark.messagesKept);
  if (mark.summary !== undefined && typeof mark.summary !== 'string') {
    fail(`summary must be a string, got ${typeof mark.summary}`);
  }
  if (mark.conversationId !== undefined && typeof mark.conversationId !== 'string') {
    fail(`conversationId must be a string, got ${typeof mark.conversationId}`);
  }
  const attrs: Attributes = {
    [ATTR_OPERATION_NAME]: OPERATION_COMPACTION,
    [ATTR_COMPACTION_KIND]: kind,
  };
  if (trigger !== undefined) attrs[ATTR_COMPACTION_TRIGGER] = trigger;
  if (tokensBefore !== undefined) attrs[ATTR_COMPACTION_TOKENS_BEFORE] = tokensBefore;
  if (tokensAfter !== undefined) attrs[ATTR_COMPACTION_TOKENS_AFTER] = tokensAfter;
  if (messagesKept !== undefined) attrs[ATTR_COMPACTION_MESSAGES_KEPT] = messagesKept;
  if (mark.summary !== undefined) {
    attrs[ATTR_COMPACTION_SUMMARY_SIZE] = mark.summary.length;
    if (captureContent()) attrs[ATTR_COMPACTION_SUMMARY] = mark.summary;
  }
  if (mark.conversationId !== undefined) attrs[ATTR_CONVERSATION_ID] = mark.conversationId;
  return attrs;
}

/**
 * Records a compaction (DESIGN §5 of rotscope): a `compaction` span under the current span,
 * ended at once, and a mark in the current async context that the next LLM span started there
 * takes, once, as `gen_ai.conversation.compacted=true` (with `RotscopeSpanProcessor`
 * registered). A mark made in a child task (an async function the caller awaits or runs in
 * parallel, marking after its first `await`) stays in that task: its parent does not see it.
 * Throws a TypeError for an unknown kind or trigger, or a count that is not a non-negative
 * integer; nothing is recorded then.
 */
export function markCompaction(mark: CompactionMark = {}): void {
  const attributes = compactionAttributes(mark);
  if (attributes[ATTR_CONVERSATION_ID] === undefined) {
    const inherited = readableAttributes(trace.getActiveSpan())?.[ATTR_CONVERSATION_ID];
    if (typeof inherited === 'string') attributes[ATTR_CONVERSATION_ID] = inherited;
  }
  const tracer = trace.getTracer(TRACER_NAME, TRACER_VERSION);
  tracer.startSpan(OPERATION_COMPACTION, { attributes }).end();
  setPendingMark();
}
