/**
 * Reads what the providers themselves say about compaction and clearing, from the JSON of one
 * request and its response (no I/O, no spans): Anthropic Messages (`compaction` content blocks,
 * `usage.iterations` compaction entries, `context_management.applied_edits`) and OpenAI
 * Responses (`compaction` output and input items, the `/responses/compact` result). Shapes
 * follow the types of `@anthropic-ai/sdk` 1.14 (`BetaCompactionBlock`, `BetaIterationsUsage`,
 * `BetaContextManagementResponse`) and `openai` 6.49 (`ResponseCompactionItem`,
 * `CompactedResponse`). Unknown shapes give nothing.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

export type Provider = 'anthropic' | 'openai';

/** A compaction the provider made; `key` identifies it when it is sent back. */
export interface ProviderCompaction {
  source: string;
  /** Identity of the compaction when it comes back in a later request (signature, item id). */
  keys: string[];
  /** The summary text when the provider returns it in clear (Anthropic); else null. */
  summary: string | null;
  tokensBefore: number | null;
  tokensAfter: number | null;
  messagesKept: number | null;
  /**
   * True when nothing was sampled after the compaction in this response (Anthropic
   * `stop_reason: "compaction"`, the compact endpoint, an OpenAI compaction item): the drop
   * may show only on the next call, so that call is marked too.
   */
  alsoNextCall: boolean;
}

/** A context edit that cleared part of the input (Anthropic context editing): not a compaction. */
export interface ProviderClear {
  /** The provider's edit type, e.g. `clear_tool_uses_20250919`. */
  edit: string;
  /** rotscope's compaction kind for it. */
  kind: 'clear_tool_results' | 'other';
  tokensCleared: number;
  /** Tool uses or thinking turns cleared. */
  itemsCleared: number | null;
}

/** What one request says. */
export interface RequestFacts {
  model: string | null;
  stream: boolean;
  /** Keys of compactions the request sends back (Anthropic blocks, OpenAI input items). */
  replayed: Array<{ key: string; summary: string | null; source: string }>;
  /** Keys of server-held state the request continues (`previous_response_id`, `conversation`). */
  continues: string[];
  /** OpenAI Responses `conversation`, for the span's conversation id. */
  conversationId: string | null;
}

/** What one response says. */
export interface ResponseFacts {
  id: string | null;
  model: string | null;
  finishReasons: string[];
  /** Input context of the final sampling, tokens (fresh + cache read + cache write). */
  contextTokens: number | null;
  inputTokens: number | null;
  outputTokens: number | null;
  cacheReadTokens: number | null;
  cacheWriteTokens: number | null;
  compactions: ProviderCompaction[];
  clears: ProviderClear[];
  /** Keys under which a later request continues this response's state. */
  continuedBy: string[];
  /** True for an LLM call (a message or a response), false for the compact endpoint. */
  isCall: boolean;
}

/** Identity of an Anthropic compaction block: its signature, else its encrypted or clear content. */
function anthropicKey(b: Obj): string | null {
  const k = str(b['signature']) ?? str(b['encrypted_content']) ?? str(b['content']);
  return k === null ? null : `anthropic:${k}`;
}

/** Identity of an OpenAI compaction item: its id, else its encrypted content. */
function openaiKeys(item: Obj): string[] {
  return [str(item['id']), str(item['encrypted_content'])]
    .filter((k): k is string => k !== null)
    .map((k) => `openai:${k}`);
}

export function readRequest(provider: Provider, body: unknown): RequestFacts {
  const facts: RequestFacts = {
    model: null,
    stream: false,
    replayed: [],
    continues: [],
    conversationId: null,
  };
  if (!isObj(body)) return facts;
  facts.model = str(body['model']);
  facts.stream = body['stream'] === true;
  if (provider === 'anthropic') {
    for (const m of arr(body['messages'])) {
      if (!isObj(m)) continue;
      for (const b of arr(m['content'])) {
        if (!isObj(b) || b['type'] !== 'compaction') continue;
        const key = anthropicKey(b);
        if (key !== null) {
          facts.replayed.push({ key, summary: str(b['content']), source: 'anthropic.compaction' });
        }
      }
    }
    return facts;
  }
  for (const item of arr(body['input'])) {
    if (!isObj(item) || item['type'] !== 'compaction') continue;
    const [key] = openaiKeys(item);
    if (key !== undefined)
      facts.replayed.push({ key, summary: null, source: 'openai.compaction_item' });
  }
  const prev = str(body['previous_response_id']);
  if (prev !== null) facts.continues.push(`openai-response:${prev}`);
  const conv = body['conversation'];
  const convId = typeof conv === 'string' ? str(conv) : isObj(conv) ? str(conv['id']) : null;
  if (convId !== null) {
    facts.continues.push(`openai-conversation:${convId}`);
    facts.conversationId = convId;
  }
  return facts;
}

function emptyResponse(): ResponseFacts {
  return {
    id: null,
    model: null,
    finishReasons: [],
    contextTokens: null,
    inputTokens: null,
    outputTokens: null,
    cacheReadTokens: null,
    cacheWriteTokens: null,
    compactions: [],
    clears: [],
    continuedBy: [],
    isCall: false,
  };
}

function anthropicResponse(body: Obj): ResponseFacts {
  const facts = emptyResponse();
  if (body['type'] !== 'message') return facts;
  facts.isCall = true;
  facts.id = str(body['id']);
  facts.model = str(body['model']);
  const stop = str(body['stop_reason']);
  if (stop !== null) facts.finishReasons = [stop];
  const usage = isObj(body['usage']) ? body['usage'] : {};
  facts.inputTokens = num(usage['input_tokens']);
  facts.outputTokens = num(usage['output_tokens']);
  facts.cacheReadTokens = num(usage['cache_read_input_tokens']);
  facts.cacheWriteTokens = num(usage['cache_creation_input_tokens']);
  facts.contextTokens = facts.inputTokens + facts.cacheReadTokens + facts.cacheWriteTokens;
  const iterations = arr(usage['iterations']).filter(isObj);
  // The context of the final sampling is the last `message` iteration's when it counts anything
  // (the top-level usage sums the iterations of a server-side tool loop). The service's rule
  // (src/model/usage-rules.ts); test/unit/model/usage-rules.test.ts holds both to the same cases.
  const lastMessage = iterations.filter((i) => i['type'] === 'message').at(-1);
  const lastCounts =
    lastMessage === undefined
      ? 0
      : num(lastMessage['input_tokens']) +
        num(lastMessage['cache_read_input_tokens']) +
        num(lastMessage['cache_creation_input_tokens']);
  const sampledContext = lastCounts > 0 ? lastCounts : facts.contextTokens;
  facts.contextTokens = sampledContext;
  const compactionIterations = iterations.filter((i) => i['type'] === 'compaction');
  const content = arr(body['content']).filter(isObj);
  const blocks = content.filter((b) => b['type'] === 'compaction');
  // Nothing sampled after the compaction: the block is the last one, or the stop says so.
  const lastIsCompaction = content.at(-1)?.['type'] === 'compaction';
  const alsoNextCall = stop === 'compaction' || lastIsCompaction;
  const count = Math.max(blocks.length, compactionIterations.length);
  for (let i = 0; i < count; i++) {
    const block = blocks[i];
    const key = block === undefined ? null : anthropicKey(block);
    facts.compactions.push({
      source: block === undefined ? 'anthropic.usage.iterations' : 'anthropic.compaction',
      keys: key === null ? [] : [key],
      summary: block === undefined ? null : str(block['content']),
      tokensBefore: null,
      // The context the next sampling started from (not known when nothing was sampled).
      tokensAfter: alsoNextCall ? null : sampledContext,
      messagesKept: null,
      alsoNextCall,
    });
  }
  const cm = isObj(body['context_management']) ? body['context_management'] : {};
  for (const e of arr(cm['applied_edits'])) {
    if (!isObj(e)) continue;
    const edit = str(e['type']) ?? 'unknown';
    const thinking = edit.startsWith('clear_thinking');
    facts.clears.push({
      edit,
      kind: thinking ? 'other' : 'clear_tool_results',
      tokensCleared: num(e['cleared_input_tokens']),
      itemsCleared:
        typeof e[thinking ? 'cleared_thinking_turns' : 'cleared_tool_uses'] === 'number'
          ? num(e[thinking ? 'cleared_thinking_turns' : 'cleared_tool_uses'])
          : null,
    });
  }
  return facts;
}

function openaiUsage(facts: ResponseFacts, usage: unknown): void {
  if (!isObj(usage)) return;
  // Responses usage: input_tokens includes the cached ones.
  facts.inputTokens = num(usage['input_tokens']);
  facts.outputTokens = num(usage['output_tokens']);
  const details = isObj(usage['input_tokens_details']) ? usage['input_tokens_details'] : {};
  facts.cacheReadTokens = num(details['cached_tokens']);
  facts.cacheWriteTokens = 0;
  facts.contextTokens = facts.inputTokens;
}

function openaiResponse(body: Obj): ResponseFacts {
  const facts = emptyResponse();
  const output = arr(body['output']).filter(isObj);
  const items = output.filter((o) => o['type'] === 'compaction');
  if (body['object'] === 'response.compaction') {
    // The /responses/compact result: the compacted list of items, ending in one compaction item.
    openaiUsage(facts, body['usage']);
    facts.id = str(body['id']);
    for (const item of items) {
      facts.compactions.push({
        source: 'openai.responses.compact',
        keys: openaiKeys(item),
        summary: null,
        tokensBefore: facts.inputTokens,
        tokensAfter: null,
        messagesKept: output.length - items.length,
        alsoNextCall: true,
      });
    }
    return facts;
  }
  if (body['object'] !== 'response') return facts;
  facts.isCall = true;
  facts.id = str(body['id']);
  facts.model = str(body['model']);
  const status = str(body['status']);
  const incomplete = isObj(body['incomplete_details'])
    ? str(body['incomplete_details']['reason'])
    : null;
  facts.finishReasons = [incomplete ?? status ?? ''].filter((r) => r !== '');
  openaiUsage(facts, body['usage']);
  for (const item of items) {
    facts.compactions.push({
      source: 'openai.compaction_item',
      keys: openaiKeys(item),
      summary: null,
      tokensBefore: null,
      tokensAfter: null,
      messagesKept: null,
      alsoNextCall: true,
    });
  }
  if (facts.id !== null) facts.continuedBy.push(`openai-response:${facts.id}`);
  const conv = body['conversation'];
  const convId = isObj(conv) ? str(conv['id']) : typeof conv === 'string' ? str(conv) : null;
  if (convId !== null) facts.continuedBy.push(`openai-conversation:${convId}`);
  return facts;
}

export function readResponse(provider: Provider, body: unknown): ResponseFacts {
  if (!isObj(body)) return emptyResponse();
  return provider === 'anthropic' ? anthropicResponse(body) : openaiResponse(body);
}
