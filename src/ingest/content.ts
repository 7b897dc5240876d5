/**
 * Content attributes (message text, prompts, tool arguments and results): removed from the
 * stored span or log record when the workspace does not capture content. Sizes are computed
 * before removal and kept on the normalized rows.
 */
import { setAttribute, type Attributes, type SpanEvent } from '../model/telemetry.ts';

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
  // Gemini CLI log events (with prompt logging on)
  'request_text',
  'response_text',
  'function_args',
  // Langfuse SDK observations
  'langfuse.observation.input',
  'langfuse.observation.output',
  // Google ADK
  'gcp.vertex.agent.llm_request',
  'gcp.vertex.agent.llm_response',
  'gcp.vertex.agent.tool_call_args',
  'gcp.vertex.agent.tool_response',
]);

/**
 * True for an attribute key that holds message content (see the module doc). Prefix
 * families are told apart by character, not by looping over prefixes: this runs for every
 * key of every kept span when content is not captured.
 */
export function isContentKey(key: string): boolean {
  const c = key.charCodeAt(0);
  if (c === 103 /* g */) {
    if (!key.startsWith('gen_ai.')) return false;
    const d = key.charCodeAt(7);
    if (d === 112 /* p */) return key.startsWith('prompt', 7);
    if (d === 99 /* c */) return key.startsWith('completion', 7) || key.startsWith('content.', 7);
    return EXACT.has(key);
  }
  if (c === 108 /* l */) {
    if (!key.startsWith('llm.')) return EXACT.has(key);
    const d = key.charCodeAt(4);
    if (d === 105 /* i */) return key.startsWith('input_messages.', 4);
    if (d === 111 /* o */) return key.startsWith('output_messages.', 4);
    if (d === 112 /* p */) return key.startsWith('prompts.', 4);
    if (d === 99 /* c */) return key.startsWith('choices.', 4);
    return false;
  }
  if (c === 97 /* a */ && key.startsWith('ai.prompt')) return true;
  return EXACT.has(key);
}

/** The attributes without content keys; the same object when nothing had to go. */
export function stripAttributes(attrs: Attributes): Attributes {
  let found = false;
  for (const k in attrs) {
    if (isContentKey(k)) {
      found = true;
      break;
    }
  }
  if (!found) return attrs;
  // build a fresh object: `delete` would turn it into a slow dictionary-mode object
  const out: Attributes = {};
  for (const k in attrs) if (!isContentKey(k)) setAttribute(out, k, attrs[k] as Attributes[string]);
  return out;
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
