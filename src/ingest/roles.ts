/**
 * Span roles (conventions §9.1): the first rule that matches decides. Rule 5 (token counts
 * only) makes a call *candidate*; `resolveAggregates` later demotes any call-like span with
 * a call below it in the same batch (Vercel roots, ADK `call_llm` wrappers, an SDK span
 * around an instrumentation span), because it repeats its children's usage.
 */
import type { SpanRole } from '../model/calls.ts';
import type { Attributes } from '../model/telemetry.ts';
import { hasUsageKeys } from './tokens.ts';

/** Which producer convention decided the role; also the call's `producer`. */
export type RoleRule =
  | 'semconv'
  | 'openinference'
  | 'traceloop'
  | 'claude_code'
  | 'vercel'
  | 'langfuse'
  | 'span_name'
  | 'usage_only'
  | 'none';

/** A span's role and the rule that decided it. */
export interface RoleDecision {
  role: SpanRole;
  rule: RoleRule;
}

const OPERATION: ReadonlyMap<string, SpanRole> = new Map<string, SpanRole>([
  ['chat', 'llm_call'],
  ['generate_content', 'llm_call'],
  ['text_completion', 'llm_call'],
  ['llm_request', 'llm_call'],
  // Gemini CLI's own operation names (conventions §5.0.2)
  ['llm_call', 'llm_call'],
  ['tool_call', 'tool'],
  ['schedule_tool_calls', 'agent_step'],
  ['agent_call', 'agent_step'],
  ['execute_tool', 'tool'],
  ['invoke_agent', 'agent_step'],
  ['create_agent', 'agent_step'],
  ['invoke_workflow', 'agent_step'],
  ['plan', 'agent_step'],
  ['agent_step', 'agent_step'],
  ['execute_task', 'agent_step'],
  ['compaction', 'compaction'],
  ['compact', 'compaction'],
  ['embeddings', 'other'],
  ['retrieval', 'other'],
]);

const OPENINFERENCE: ReadonlyMap<string, SpanRole> = new Map<string, SpanRole>([
  ['LLM', 'llm_call'],
  ['TOOL', 'tool'],
  ['AGENT', 'agent_step'],
  ['CHAIN', 'agent_step'],
]);

/** Langfuse SDK `langfuse.observation.type` (@langfuse/tracing 5.x observation types). */
const LANGFUSE: ReadonlyMap<string, SpanRole> = new Map<string, SpanRole>([
  ['generation', 'llm_call'],
  ['tool', 'tool'],
  ['agent', 'agent_step'],
  ['chain', 'agent_step'],
]);

const NAMES: ReadonlyMap<string, SpanRole> = new Map<string, SpanRole>([
  ['claude_code.llm_request', 'llm_call'],
  ['claude_code.tool', 'tool'],
  ['claude_code.tool.execution', 'tool'],
  ['claude_code.tool.blocked_on_user', 'tool'],
  ['claude_code.interaction', 'agent_step'],
  ['ai.toolCall', 'tool'],
  ['ai.generateText', 'agent_step'],
  ['ai.streamText', 'agent_step'],
  ['ai.generateObject', 'agent_step'],
  ['ai.streamObject', 'agent_step'],
]);

const CLAUDE_CODE_TYPES: ReadonlyMap<string, SpanRole> = new Map<string, SpanRole>([
  ['llm_request', 'llm_call'],
  ['tool', 'tool'],
  ['interaction', 'agent_step'],
]);

function isCompactionWord(w: string): boolean {
  return (
    w === 'compact' || w === 'compaction' || w === 'compact_messages' || w === 'compact_events'
  );
}

/**
 * True for custom compaction span names (§1.6): `compact_messages`, `compact_events auto`,
 * `redpanda.compaction`, `openclaw.compaction`, `compact`; i.e. a word of the name, split on
 * `.`, `_` boundaries as in `/(^|[._ ])compact(ion|_messages|_events)?($|[._ ])/i`.
 */
export function isCompactionName(name: string): boolean {
  const lower = name.toLowerCase();
  if (!lower.includes('compact')) return false;
  for (const part of lower.split(/[. ]/)) {
    if (isCompactionWord(part)) return true;
    // `foo_compaction` / `compaction_x`: underscores also separate words
    for (const w of part.split('_')) if (w === 'compact' || w === 'compaction') return true;
  }
  return false;
}

function byName(name: string): RoleDecision | null {
  const exact = NAMES.get(name);
  if (exact !== undefined) {
    return { role: exact, rule: name.startsWith('claude_code.') ? 'claude_code' : 'vercel' };
  }
  if (name.startsWith('ai.')) {
    if (name.endsWith('.doGenerate') || name.endsWith('.doStream'))
      return { role: 'llm_call', rule: 'vercel' };
    // embeddings and reranking carry `ai.usage.tokens` but are not chat calls
    if (name.startsWith('ai.embed') || name.startsWith('ai.rerank'))
      return { role: 'other', rule: 'vercel' };
  }
  if (name.endsWith('.chat') || name.endsWith('.completion')) {
    return { role: 'llm_call', rule: 'span_name' };
  }
  if (isCompactionName(name)) return { role: 'compaction', rule: 'span_name' };
  return null;
}

/**
 * Classifies one span (conventions §9.1), rules 1–5 in order. Rule 5 gives `llm_call` with
 * rule `usage_only`: a candidate that `resolveAggregates` may demote.
 */
export function classifyRole(name: string, attrs: Attributes): RoleDecision {
  const op = attrs['gen_ai.operation.name'];
  if (typeof op === 'string' && op !== '') {
    const r = OPERATION.get(op);
    if (r !== undefined) return { role: r, rule: 'semconv' };
    if (op.includes('_memory')) return { role: 'other', rule: 'semconv' };
  }
  const oi = attrs['openinference.span.kind'];
  if (typeof oi === 'string' && oi !== '') {
    return { role: OPENINFERENCE.get(oi.toUpperCase()) ?? 'other', rule: 'openinference' };
  }
  const lf = attrs['langfuse.observation.type'];
  if (typeof lf === 'string' && lf !== '') {
    return { role: LANGFUSE.get(lf) ?? 'other', rule: 'langfuse' };
  }
  const tl = attrs['traceloop.span.kind'];
  if (tl === 'tool') return { role: 'tool', rule: 'traceloop' };
  if (tl === 'agent' || tl === 'workflow' || tl === 'task') {
    return { role: 'agent_step', rule: 'traceloop' };
  }
  const rt = attrs['llm.request.type'];
  if (rt === 'chat' || rt === 'completion') return { role: 'llm_call', rule: 'traceloop' };
  const named = byName(name);
  if (named !== null) return named;
  const st = attrs['span.type'];
  if (typeof st === 'string' && name.startsWith('claude_code')) {
    const r = CLAUDE_CODE_TYPES.get(st);
    if (r !== undefined) return { role: r, rule: 'claude_code' };
  }
  if (hasUsageKeys(attrs)) return { role: 'llm_call', rule: 'usage_only' };
  return { role: 'other', rule: 'none' };
}

/** A span reduced to what the aggregate rule needs. */
export interface RoleNode {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  role: SpanRole;
  /** Set by `resolveAggregates`: a call-like span that repeats the usage of a call below it. */
  aggregate: boolean;
}

/**
 * Marks every `llm_call` that has an `llm_call` descendant in the batch as an aggregate:
 * its role becomes `agent_step` and it yields no LlmCall. Walks up from each call, O(depth).
 * `byId` maps span ids to nodes (span ids are 64-bit random; a
 * parent found under another trace id is ignored).
 */
export function resolveAggregates(
  nodes: readonly RoleNode[],
  byId: ReadonlyMap<string, RoleNode>,
): void {
  for (const n of nodes) {
    if (n.role !== 'llm_call') continue;
    let parent = n.parentSpanId;
    let guard = 0;
    while (parent !== null && guard++ < 256) {
      const p = byId.get(parent);
      if (p === undefined || p.traceId !== n.traceId) break;
      if (p.role === 'llm_call' || p.aggregate) {
        if (p.aggregate) break; // already walked above this one
        p.aggregate = true;
        p.role = 'agent_step';
      }
      parent = p.parentSpanId;
    }
  }
}
