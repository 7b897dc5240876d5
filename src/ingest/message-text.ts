/**
 * The messages of a stored span, as people read them: role, text and the tool they name. Where
 * src/ingest/messages.ts reduces messages to sizes for the detectors, this keeps the text, for
 * What was lost. Read are OTel GenAI `gen_ai.input.messages` (and `gen_ai.system_instructions`)
 * and OpenInference `llm.input_messages.N.message.*`.
 */
import { setAttribute } from '../model/telemetry.ts';
import { isObj } from './attrs.ts';

/** The most characters of each message's text shown. */
export const MAX_MESSAGE_TEXT = 4_000;

export interface ShownMessage {
  role: string;
  /** Size of the message's content, in characters. */
  chars: number;
  /** The message's text (capped at {@link MAX_MESSAGE_TEXT}); null when content was not captured. */
  text: string | null;
  /** The tool whose call or result the message holds, when it names one. */
  tool: string | null;
}

/** A message as shown, with the key equal messages share (role and the whole message). */
export interface ReadMessage {
  key: string;
  shown: ShownMessage;
}

type Attrs = Record<string, unknown>;

/** A stored attribute that may hold JSON text: parsed when it parses, else as it is. */
function parsed(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
}

const asText = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);

function shown(role: string, text: string, tool: string | null, raw: unknown): ReadMessage {
  return {
    key: `${role}\u0000${JSON.stringify(raw)}`,
    shown: { role, chars: text.length, text: text.slice(0, MAX_MESSAGE_TEXT), tool },
  };
}

/** A semconv message (`{ role, parts: [...] }`) as role, text and tool. */
function semconvMessage(m: unknown): ReadMessage | null {
  if (!isObj(m)) return null;
  const role = typeof m['role'] === 'string' ? m['role'] : 'user';
  const parts = m['parts'];
  if (!Array.isArray(parts)) return shown(role, asText(m['content']), null, m);
  let tool: string | null = null;
  const texts = parts.map((p) => {
    if (!isObj(p)) return asText(p);
    if (typeof p['name'] === 'string') tool ??= p['name'];
    switch (p['type']) {
      case 'text':
      case 'reasoning':
        return asText(p['content']);
      case 'tool_call':
        return `${asText(p['name'])}(${asText(p['arguments'])})`;
      case 'tool_call_response':
        return asText(p['response'] ?? p['result']);
      default:
        return asText(p['content'] ?? p);
    }
  });
  return shown(role, texts.join('\n'), tool, m);
}

/** OpenInference `llm.input_messages.N.message.{role,content,name}` as messages, by N. */
function openInferenceMessages(attrs: Attrs): ReadMessage[] | null {
  const prefix = 'llm.input_messages.';
  const byIndex = new Map<number, Attrs>();
  for (const [key, value] of Object.entries(attrs)) {
    if (!key.startsWith(prefix)) continue;
    const dot = key.indexOf('.', prefix.length);
    const index = Number(key.slice(prefix.length, dot));
    if (dot < 0 || !Number.isInteger(index)) continue;
    const entry = byIndex.get(index) ?? {};
    setAttribute(entry, key.slice(dot + 1), value);
    byIndex.set(index, entry);
  }
  if (byIndex.size === 0) return null;
  return [...byIndex.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([, m]) => {
      const role = typeof m['message.role'] === 'string' ? m['message.role'] : 'user';
      const name = typeof m['message.name'] === 'string' ? m['message.name'] : null;
      return shown(role, asText(m['message.content']), name, m);
    });
}

/** Whether an attribute key is one of those this module reads the messages from. */
const isMessageKey = (key: string) =>
  key === 'gen_ai.input.messages' ||
  key === 'gen_ai.system_instructions' ||
  key.startsWith('llm.input_messages.');

/**
 * Of a span's attributes, those {@link inputMessages} and {@link systemText} read (kept with the
 * call, src/model/calls.ts LlmCall.inputMessages); undefined when there are none.
 */
export function messageAttributes(attrs: Attrs): Attrs | undefined {
  let out: Attrs | undefined;
  for (const key in attrs) {
    if (!isMessageKey(key)) continue;
    (out ??= {})[key] = attrs[key];
  }
  return out;
}

/** The attributes {@link messageAttributes} picked, from their stored JSON text; {} for none. */
export function storedMessageAttributes(text: string | null | undefined): Attrs {
  const value = text ? parsed(text) : undefined;
  return isObj(value) ? value : {};
}

/** The input messages a stored span's attributes hold; null when they hold no message content. */
export function inputMessages(attrs: Attrs): ReadMessage[] | null {
  const semconv = parsed(attrs['gen_ai.input.messages']);
  if (Array.isArray(semconv)) return semconv.map(semconvMessage).filter((m) => m !== null);
  return openInferenceMessages(attrs);
}

/** The system prompt's text a stored span's attributes hold, or null. */
export function systemText(attrs: Attrs): string | null {
  const raw = parsed(attrs['gen_ai.system_instructions']);
  if (raw !== undefined) {
    if (Array.isArray(raw))
      return raw.map((p) => (isObj(p) ? asText(p['content']) : asText(p))).join('\n');
    return asText(raw);
  }
  const semconv = parsed(attrs['gen_ai.input.messages']);
  if (Array.isArray(semconv)) {
    const system = semconv.map(semconvMessage).filter((m) => m?.shown.role === 'system');
    if (system.length > 0) return system.map((m) => m?.shown.text ?? '').join('\n');
  }
  return null;
}
