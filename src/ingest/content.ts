/**
 * Content attributes (message text, prompts, tool arguments and results): removed from the
 * stored span or log record when the workspace does not capture content. Sizes are computed
 * before removal and kept on the normalized rows.
 */
import type { Attributes, SpanEvent } from '../model/telemetry.ts';

const EXACT = new Set([
  'gen_ai.input.messages',
  'gen_ai.output.messages',
  'gen_ai.system_instructions',
  'gen_ai.prompt',
  'gen_ai.completion',
  'gen_ai.tool.call.arguments',
  'gen_ai.tool.call.result',
  'gen_ai.tool.definitions',
  'input.value',
  'output.value',
  'ai.response.text',
  'ai.response.object',
  'ai.response.toolCalls',
  'ai.response.reasoning',
  'ai.toolCall.args',
  'ai.toolCall.result',
  'traceloop.entity.input',
  'traceloop.entity.output',
  'tool.parameters',
  // Claude Code (gated by its own switches, but content when present)
  'user_prompt',
  'prompt',
  'tool_input',
  'tool_parameters',
  'full_command',
  'new_context',
  'system_prompt_preview',
  'user_system_prompt',
  'response.model_output',
  'body',
  // Google ADK
  'gcp.vertex.agent.llm_request',
  'gcp.vertex.agent.llm_response',
  'gcp.vertex.agent.tool_call_args',
  'gcp.vertex.agent.tool_response',
]);

const PREFIXES = [
  'gen_ai.prompt.',
  'gen_ai.completion.',
  'llm.input_messages.',
  'llm.output_messages.',
  'llm.prompts.',
  'llm.choices.',
  'ai.prompt',
  'gen_ai.content.',
];

/** True for an attribute key that holds message content (see the module doc). */
export function isContentKey(key: string): boolean {
  if (EXACT.has(key)) return true;
  const c = key.charCodeAt(0);
  if (c !== 103 /* g */ && c !== 108 /* l */ && c !== 97 /* a */) return false;
  for (const p of PREFIXES) if (key.startsWith(p)) return true;
  return false;
}

/** The attributes without content keys; the same object when nothing had to go. */
export function stripAttributes(attrs: Attributes): Attributes {
  let out: Attributes | null = null;
  for (const k in attrs) {
    if (isContentKey(k)) {
      if (out === null) out = { ...attrs };
      delete out[k];
    }
  }
  return out ?? attrs;
}

/** Events with their content attributes removed (`tool.output`, `gen_ai.content.*`, choice events). */
export function stripEvents(events: readonly SpanEvent[]): SpanEvent[] {
  let changed = false;
  const out = events.map((e) => {
    const attributes = stripAttributes(e.attributes);
    if (attributes === e.attributes && !isContentEvent(e.name)) return e;
    changed = true;
    return { ...e, attributes: isContentEvent(e.name) ? {} : attributes };
  });
  return changed ? out : (events as SpanEvent[]);
}

/** Events whose every attribute is content. */
function isContentEvent(name: string): boolean {
  return (
    name === 'tool.output' ||
    name === 'gen_ai.content.prompt' ||
    name === 'gen_ai.content.completion' ||
    name === 'gen_ai.choice' ||
    name.endsWith('.message')
  );
}
