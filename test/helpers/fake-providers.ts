/**
 * A loopback fake of the two provider APIs the SDK's automatic reports read, answering with
 * the real response shapes (as typed by `@anthropic-ai/sdk` 1.14 and `openai` 6.49):
 * - Anthropic `POST /v1/messages`: a Message with `content` blocks (text, `compaction`),
 *   `usage` with `iterations` (`message` / `compaction` entries) and `context_management`
 *   with `applied_edits` (`clear_tool_uses_20250919`, `clear_thinking_20251015`);
 * - OpenAI `POST /v1/responses`: a Response whose `output` may hold a `compaction` item, and
 *   `POST /v1/responses/compact`: the `response.compaction` object (the kept user messages
 *   followed by one compaction item).
 * Replies are consumed in order; a reply for another path answers 500 so a wrong script shows
 * at once. Every request body is recorded.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakePath = '/v1/messages' | '/v1/responses' | '/v1/responses/compact';

export interface FakeProvider {
  url: string;
  requests: Array<{ path: string; body: Record<string, unknown> }>;
  enqueue(...replies: Array<{ path: FakePath; body: Record<string, unknown> }>): void;
  pending(): number;
  close(): Promise<void>;
}

export async function startFakeProvider(): Promise<FakeProvider> {
  const queue: Array<{ path: FakePath; body: Record<string, unknown> }> = [];
  const requests: FakeProvider['requests'] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      requests.push({ path, body: raw === '' ? {} : (JSON.parse(raw) as Record<string, unknown>) });
      const next = queue[0];
      if (req.method !== 'POST' || next === undefined || next.path !== path) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `unexpected ${req.method} ${path}` } }));
        return;
      }
      queue.shift();
      res.writeHead(200, {
        'content-type': 'application/json',
        'request-id': `req_${requests.length}`,
      });
      res.end(JSON.stringify(next.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...replies) => queue.push(...replies),
    pending: () => queue.length,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let counter = 0;
const nextId = (prefix: string) => `${prefix}_${String(++counter).padStart(6, '0')}`;

/** Anthropic Message usage: `input_tokens` excludes the cache (here: none). */
function anthropicUsage(input: number, iterations: unknown[] | null) {
  return {
    input_tokens: input,
    output_tokens: 400,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation: null,
    server_tool_use: null,
    service_tier: 'standard',
    iterations,
  };
}

function anthropicMessage(content: unknown[], usage: unknown, extra: Record<string, unknown> = {}) {
  return {
    path: '/v1/messages' as const,
    body: {
      id: nextId('msg'),
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-6',
      content,
      stop_reason: 'end_turn',
      stop_sequence: null,
      container: null,
      context_management: null,
      usage,
      ...extra,
    },
  };
}

const text = (t: string) => ({ type: 'text', text: t, citations: null });

/** A plain Anthropic reply with `input` context tokens. */
export function anthropicReply(input: number) {
  return anthropicMessage([text('ok')], anthropicUsage(input, null));
}

/**
 * An Anthropic reply in which the server compacted the context before sampling: a
 * `compaction` block (summary in clear, signed) then the answer; `usage.iterations` holds the
 * compaction pass and the sampling on the compacted context (`input` tokens).
 */
export function anthropicCompactionReply(input: number, summary: string) {
  return anthropicMessage(
    [
      { type: 'compaction', content: summary, encrypted_content: null, signature: nextId('sig') },
      text('ok'),
    ],
    anthropicUsage(input, [
      {
        type: 'compaction',
        input_tokens: 141_000,
        output_tokens: 3_000,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: null,
      },
      {
        type: 'message',
        model: 'claude-sonnet-4-6',
        input_tokens: input,
        output_tokens: 400,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: null,
      },
    ]),
  );
}

/**
 * An Anthropic reply after context editing cleared `cleared` tokens of old tool uses (and
 * whatever `moreEdits` say, e.g. a `clear_thinking_20251015` edit).
 */
export function anthropicClearReply(input: number, cleared: number, moreEdits: unknown[] = []) {
  return anthropicMessage([text('ok')], anthropicUsage(input, null), {
    context_management: {
      applied_edits: [
        { type: 'clear_tool_uses_20250919', cleared_input_tokens: cleared, cleared_tool_uses: 12 },
        ...moreEdits,
      ],
    },
  });
}

function responseUsage(input: number) {
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 400,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + 400,
  };
}

const outputMessage = () => ({
  type: 'message',
  id: nextId('msg'),
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text: 'ok', annotations: [], logprobs: [] }],
});

/** An OpenAI compaction item (encrypted, as the API returns it). */
export const compactionItem = () => ({
  type: 'compaction',
  id: nextId('cmp'),
  encrypted_content: `gAAAA${nextId('enc')}`,
});

/** An OpenAI Response with `input` tokens; `compacted` puts a compaction item before the answer. */
export function openaiReply(
  input: number,
  opts: { compacted?: boolean; conversation?: string } = {},
) {
  return {
    path: '/v1/responses' as const,
    body: {
      id: nextId('resp'),
      object: 'response',
      created_at: 1_780_000_000,
      status: 'completed',
      error: null,
      incomplete_details: null,
      model: 'gpt-5.4',
      output: [...(opts.compacted ? [compactionItem()] : []), outputMessage()],
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools: [],
      usage: responseUsage(input),
      ...(opts.conversation ? { conversation: { id: opts.conversation } } : {}),
    },
  };
}

/** The `/responses/compact` result: the kept user messages, then one compaction item. */
export function openaiCompactReply(input: number, keptUserMessages: string[]) {
  return {
    path: '/v1/responses/compact' as const,
    body: {
      id: nextId('cresp'),
      object: 'response.compaction',
      created_at: 1_780_000_000,
      output: [
        ...keptUserMessages.map((t) => ({
          type: 'message',
          id: nextId('msg'),
          role: 'user',
          status: 'completed',
          content: [{ type: 'input_text', text: t }],
        })),
        compactionItem(),
      ],
      usage: responseUsage(input),
    },
  };
}
