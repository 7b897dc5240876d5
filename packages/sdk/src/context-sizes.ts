/**
 * Context sizes without content: the sizes of an LLM request's parts (system prompt, messages,
 * each tool's results) measured in the application and put on the next LLM span as
 * `rotscope.input.sizes` (a JSON object of numbers, never text), so rotscope's tool_takeover and
 * "What was lost" work with content capture off.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** Sizes of one request's input. `messages` includes the tool results. */
export interface ContextSizes {
  /** `chars` (UTF-16 code units of text, as `String.length`) or `tokens`. */
  unit: 'chars' | 'tokens';
  system?: number;
  messages?: number;
  /** Total size of each tool's results present in the input, by tool name. */
  tools?: Record<string, number>;
}

/** A chat request, Anthropic Messages or OpenAI Chat Completions shape (only sizes are read). */
export interface ChatRequest {
  system?: unknown;
  messages?: readonly unknown[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null;

/** Characters of text in a content value: a string, or text/JSON of its blocks. */
function textSize(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (Array.isArray(v)) return v.reduce((n: number, b) => n + textSize(b), 0);
  if (isObj(v)) {
    if (typeof v['text'] === 'string') return v['text'].length;
    if ('content' in v) return textSize(v['content']);
    if ('input' in v) return JSON.stringify(v['input'] ?? null).length;
    return 0;
  }
  return v === undefined || v === null ? 0 : String(v).length;
}

/**
 * Measures a chat request: the system prompt (Anthropic `system`, or OpenAI `system` /
 * `developer` messages), all messages, and each tool's results, attributed by name through the
 * tool call that asked for them (Anthropic `tool_use` / `tool_result`, OpenAI `tool_calls` /
 * role `tool`). Sizes are characters.
 */
export function measureContext(request: ChatRequest): ContextSizes {
  if (!isObj(request))
    throw new TypeError('@rotscope/sdk measureContext: the request must be an object');
  let system = textSize(request.system);
  let messages = 0;
  const names = new Map<string, string>();
  const tools: Record<string, number> = {};
  const addTool = (id: unknown, size: number) => {
    const name = (typeof id === 'string' && names.get(id)) || 'unknown';
    tools[name] = (tools[name] ?? 0) + size;
  };
  const list: readonly unknown[] = Array.isArray(request.messages) ? request.messages : [];
  for (const m of list) {
    if (!isObj(m)) continue;
    const size = textSize(m['content']);
    if (m['role'] === 'system' || m['role'] === 'developer') {
      system += size;
      continue;
    }
    messages += size;
    for (const call of Array.isArray(m['tool_calls']) ? m['tool_calls'] : []) {
      if (isObj(call) && typeof call['id'] === 'string' && isObj(call['function'])) {
        const name = call['function']['name'];
        if (typeof name === 'string') names.set(call['id'], name);
        messages += textSize(call['function']['arguments']);
      }
    }
    if (m['role'] === 'tool') addTool(m['tool_call_id'], size);
    if (!Array.isArray(m['content'])) continue;
    for (const b of m['content']) {
      if (!isObj(b)) continue;
      if (
        b['type'] === 'tool_use' &&
        typeof b['id'] === 'string' &&
        typeof b['name'] === 'string'
      ) {
        names.set(b['id'], b['name']);
      } else if (b['type'] === 'tool_result') {
        addTool(b['tool_use_id'], textSize(b['content']));
      }
    }
  }
  return { unit: 'chars', system, messages, tools };
}

const pendingSizes = new AsyncLocalStorage<{ json: string | null }>();

function checkSizes(s: ContextSizes): void {
  const fail = (m: string): never => {
    throw new TypeError(`@rotscope/sdk recordContextSizes: ${m}`);
  };
  if (!isObj(s)) fail('sizes must be an object');
  if (s.unit !== 'chars' && s.unit !== 'tokens')
    fail(`unknown unit ${JSON.stringify(s.unit)}; expected chars or tokens`);
  const n = (name: string, v: unknown) => {
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v >= 0)) {
      fail(`${name} must be a non-negative number, got ${JSON.stringify(v)}`);
    }
  };
  n('system', s.system);
  n('messages', s.messages);
  for (const [k, v] of Object.entries(s.tools ?? {})) n(`tools.${k}`, v);
}

/**
 * Puts the sizes of the next LLM request on its span (`rotscope.input.sizes`, with
 * `RotscopeSpanProcessor`): give the request itself (measured with `measureContext`) or sizes
 * you measured (e.g. in tokens). Same async-context rules as `markCompaction`; taken once.
 */
export function recordContextSizes(sizesOrRequest: ContextSizes | ChatRequest): void {
  const sizes =
    typeof sizesOrRequest === 'object' && sizesOrRequest !== null && 'unit' in sizesOrRequest
      ? sizesOrRequest
      : measureContext(sizesOrRequest);
  checkSizes(sizes);
  pendingSizes.enterWith({ json: JSON.stringify(sizes) });
}

/** Takes the pending sizes of the current async context (the JSON to set), once. */
export function takePendingSizes(): string | null {
  const cell = pendingSizes.getStore();
  if (cell === undefined || cell.json === null) return null;
  const json = cell.json;
  cell.json = null;
  return json;
}
