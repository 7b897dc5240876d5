/**
 * Conversation keys (conventions §9.2), agent identity, side calls and runs. A stream is
 * `${conversationId}|${agentId ?? 'main'}`: calls of one stream follow each other.
 */
import type { Attributes } from '../model/telemetry.ts';

const CONVERSATION_KEYS = [
  'gen_ai.conversation.id',
  'session.id',
  'traceloop.association.properties.session_id',
  'ai.telemetry.metadata.sessionId',
  'ai.telemetry.metadata.conversationId',
  'ai.settings.context.sessionId',
  'langfuse.session.id', // Langfuse SDK compat key; 5.x sends `session.id`
] as const;

/**
 * The keys an agent's conversation id is read from: its own first (its profile's
 * `telemetry.conversationKeys`, src/model/agents/; e.g. Claude Code's is always its `session.id`:
 * from 2.1.3xx its spans also carry `gen_ai.conversation.id`, which on a sub-agent's spans is the
 * sub-agent's id, conventions §5.0.1), then the generic ones.
 */
const KEYS_FIRST = new WeakMap<readonly string[], readonly string[]>();
function keysWith(first: readonly string[]): readonly string[] {
  let keys = KEYS_FIRST.get(first);
  if (keys === undefined) {
    keys = [...first, ...CONVERSATION_KEYS.filter((k) => !first.includes(k))];
    KEYS_FIRST.set(first, keys);
  }
  return keys;
}

/**
 * The conversation id sent on these attributes (§9.2 rules 1–5), or null; `first`: the keys the
 * producer's own conversation id is on, tried first.
 */
export function conversationIdOf(attrs: Attributes, first?: readonly string[]): string | null {
  for (const k of first === undefined ? CONVERSATION_KEYS : keysWith(first)) {
    const v = attrs[k];
    if (typeof v === 'string' && v !== '') return v;
    if (typeof v === 'number') return String(v);
  }
  return null;
}

/** The stream key of a conversation and agent. */
export function streamKeyOf(conversationId: string, agentId: string | null): string {
  return `${conversationId}|${agentId ?? 'main'}`;
}

const MAIN_SOURCES = new Set(['repl_main_thread', 'main', 'sdk', 'sdk_main', 'print', 'user']);

/** How a Claude Code `query_source` relates to the conversation's main thread. */
export type QuerySourceKind = 'main' | 'subagent' | 'side';

/**
 * Classes a Claude Code `query_source` / `query_source_safe`: the main loop
 * (`repl_main_thread`, `repl_main_thread:…`, `main`, `sdk`), a sub-agent (`agent:…`,
 * `subagent…`), or a side call (`compact`, title generation, prompt suggestions, …).
 */
export function classifyQuerySource(qs: string): QuerySourceKind {
  const v = qs.trim().toLowerCase();
  if (MAIN_SOURCES.has(v) || v.startsWith('repl_main_thread') || v.startsWith('sdk:'))
    return 'main';
  if (v.startsWith('agent') || v.startsWith('subagent')) return 'subagent';
  return 'side';
}

/** The Claude Code query source of a span or log record, if any. */
export function querySourceOf(attrs: Attributes): string | null {
  for (const k of ['query_source', 'query_source_safe']) {
    const v = attrs[k];
    if (typeof v === 'string' && v !== '') return v;
  }
  return null;
}

/**
 * Side-call reason of a Claude Code record: the `query_source` value when it is neither the
 * main thread nor a sub-agent (e.g. `compact`, `generate_session_title`), else null.
 */
export function sideCallOf(attrs: Attributes): string | null {
  const qs = querySourceOf(attrs);
  if (qs === null) return null;
  return classifyQuerySource(qs) === 'side' ? qs : null;
}

/**
 * Claude Code sub-agent identity on a span or log: `agent_id`, else `agent.id`, else a
 * `gen_ai.conversation.id` that is not the session (2.1.3xx puts the sub-agent's id there, also
 * on the tool sub-spans that carry no `agent_id`).
 */
export function claudeCodeAgentId(attrs: Attributes): string | null {
  for (const k of ['agent_id', 'agent.id']) {
    const v = attrs[k];
    if (typeof v === 'string' && v !== '') return v;
  }
  const conversation = attrs['gen_ai.conversation.id'];
  const session = attrs['session.id'];
  if (
    typeof conversation === 'string' &&
    conversation !== '' &&
    typeof session === 'string' &&
    session !== '' &&
    conversation !== session
  )
    return conversation;
  const qs = querySourceOf(attrs);
  if (qs !== null && classifyQuerySource(qs) === 'subagent') {
    const name = attrs['agent.name'];
    return typeof name === 'string' && name !== '' ? name : qs;
  }
  return null;
}
