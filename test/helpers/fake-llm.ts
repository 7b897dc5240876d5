/**
 * A loopback fake of the LLM providers' HTTP APIs, for end-to-end tests: the real SDKs and
 * instrumentations talk to it exactly as they would to the provider, and every reply comes
 * from a script (text or tool calls, finish/stop reason, usage with cache numbers).
 *
 * Endpoints (non-streaming and SSE streaming):
 * - OpenAI chat completions `POST /v1/chat/completions` (`stream: true`, with the usage chunk
 *   when `stream_options.include_usage` is set);
 * - OpenAI Responses `POST /v1/responses` (`stream: true` gives the typed event stream);
 * - Anthropic messages `POST /v1/messages` (message_start, content_block_*, message_delta,
 *   message_stop).
 *
 * Replies are consumed in order, whatever the endpoint (a reply may pin its endpoint with
 * `expect`, and the server answers 500 when the next reply is for another endpoint, so a
 * test sees a wrong script at once). The script can be set in-process (`enqueue`) or over
 * HTTP (`POST /_fake/script` with a JSON array of replies), so a producer can be given only
 * the server's URL. Every request received is recorded (`requests`, `GET /_fake/requests`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Endpoint = 'chat' | 'responses' | 'messages';

export interface ScriptedToolCall {
  /** The call id (OpenAI `call_…` / Anthropic `toolu_…`). */
  id: string;
  name: string;
  /** The arguments, as an object (serialized to JSON for OpenAI). */
  input: Record<string, unknown>;
}

/**
 * Token usage in provider-neutral terms. Each endpoint reports it in its provider's way:
 * OpenAI `prompt_tokens`/`input_tokens` = fresh + cacheRead + cacheWrite (inclusive) with
 * `cached_tokens` = cacheRead (and `cache_write_tokens` when cacheWrite > 0); Anthropic
 * `input_tokens` = fresh (exclusive), `cache_read_input_tokens`, `cache_creation_input_tokens`.
 */
export interface ScriptedUsage {
  /** Input tokens neither read from nor written to the cache. */
  fresh: number;
  cacheRead?: number;
  cacheWrite?: number;
  output: number;
}

export interface ScriptedReply {
  /** The endpoint this reply is meant for; checked when set. */
  expect?: Endpoint;
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /**
   * The raw finish/stop reason as the provider sends it (`stop`, `length`, `tool_calls`,
   * `end_turn`, `max_tokens`, `tool_use`, or for Responses `max_output_tokens` /
   * `content_filter`, which make the response `incomplete`). Defaults from the content.
   */
  finishReason?: string;
  usage: ScriptedUsage;
  /** The model the response reports; defaults to the request's model. */
  model?: string;
  /** The response id; generated when absent. */
  id?: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  endpoint: Endpoint | null;
  stream: boolean;
}

export interface FakeLlm {
  /** Base URL, e.g. `http://127.0.0.1:40123` (OpenAI clients want `${url}/v1`). */
  url: string;
  requests: RecordedRequest[];
  enqueue(...replies: ScriptedReply[]): void;
  /** Replies not consumed yet. */
  pending(): number;
  close(): Promise<void>;
}

/** Adds the scripted replies to a fake LLM known only by URL (another process or helper). */
export async function scriptFakeLlm(url: string, replies: ScriptedReply[]): Promise<void> {
  const res = await fetch(`${url}/_fake/script`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(replies),
  });
  if (!res.ok) throw new Error(`fake LLM refused the script: ${res.status} ${await res.text()}`);
}

/** Reads the requests a fake LLM known only by URL has received. */
export async function fakeLlmRequests(url: string): Promise<RecordedRequest[]> {
  const res = await fetch(`${url}/_fake/requests`);
  return (await res.json()) as RecordedRequest[];
}

export async function startFakeLlm(): Promise<FakeLlm> {
  const queue: ScriptedReply[] = [];
  const requests: RecordedRequest[] = [];
  let seq = 0;
  const nextId = (prefix: string): string => `${prefix}${(++seq).toString().padStart(6, '0')}`;

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
      }
      res.end(JSON.stringify({ error: { message: String(err) } }));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path === '/_fake/script' && req.method === 'POST') {
      const replies = JSON.parse(raw) as ScriptedReply[];
      queue.push(...replies);
      return sendJson(res, 200, { queued: queue.length });
    }
    if (path === '/_fake/requests' && req.method === 'GET') {
      return sendJson(res, 200, requests);
    }
    const endpoint: Endpoint | null =
      path === '/v1/chat/completions'
        ? 'chat'
        : path === '/v1/responses'
          ? 'responses'
          : path === '/v1/messages'
            ? 'messages'
            : null;
    let body: Record<string, unknown> = {};
    try {
      body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    } catch {
      body = { _unparsed: raw };
    }
    const stream = body.stream === true;
    requests.push({ method: req.method ?? '', path, headers: req.headers, body, endpoint, stream });
    if (!endpoint || req.method !== 'POST') {
      return sendJson(res, 404, { error: { message: `fake LLM: no route ${req.method} ${path}` } });
    }
    const reply = queue.shift();
    if (!reply) {
      return sendJson(res, 500, { error: { message: `fake LLM: script exhausted at ${path}` } });
    }
    if (reply.expect && reply.expect !== endpoint) {
      return sendJson(res, 500, {
        error: { message: `fake LLM: next reply is for ${reply.expect}, request was ${endpoint}` },
      });
    }
    const model = reply.model ?? (typeof body.model === 'string' ? body.model : 'unknown-model');
    if (endpoint === 'chat') return chat(res, reply, model, stream, body);
    if (endpoint === 'responses') return responses(res, reply, model, stream, body);
    return messages(res, reply, model, stream);
  }

  // ---- OpenAI chat completions -------------------------------------------------------------

  function openAiUsage(u: ScriptedUsage): Record<string, unknown> {
    const prompt = u.fresh + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0);
    return {
      prompt_tokens: prompt,
      completion_tokens: u.output,
      total_tokens: prompt + u.output,
      prompt_tokens_details: {
        cached_tokens: u.cacheRead ?? 0,
        audio_tokens: 0,
        ...(u.cacheWrite ? { cache_write_tokens: u.cacheWrite } : {}),
      },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
    };
  }

  function chat(
    res: ServerResponse,
    r: ScriptedReply,
    model: string,
    stream: boolean,
    body: Record<string, unknown>,
  ): void {
    const id = r.id ?? nextId('chatcmpl-fake');
    const created = Math.floor(Date.now() / 1000);
    const finish = r.finishReason ?? (r.toolCalls?.length ? 'tool_calls' : 'stop');
    const toolCalls = (r.toolCalls ?? []).map((t) => ({
      id: t.id,
      type: 'function',
      function: { name: t.name, arguments: JSON.stringify(t.input) },
    }));
    if (!stream) {
      return sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        system_fingerprint: 'fp_fake',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: r.text ?? null,
              refusal: null,
              ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
            },
            logprobs: null,
            finish_reason: finish,
          },
        ],
        usage: openAiUsage(r.usage),
      });
    }
    const includeUsage =
      typeof body.stream_options === 'object' &&
      body.stream_options !== null &&
      (body.stream_options as Record<string, unknown>).include_usage === true;
    const base = {
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      system_fingerprint: 'fp_fake',
    };
    const chunk = (delta: Record<string, unknown>, finishReason: string | null) => ({
      ...base,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage ? { usage: null } : {}),
    });
    const events: string[] = [];
    events.push(
      sseData(chunk({ role: 'assistant', content: r.text === undefined ? null : '' }, null)),
    );
    for (const piece of split(r.text ?? '')) events.push(sseData(chunk({ content: piece }, null)));
    toolCalls.forEach((t, index) => {
      events.push(
        sseData(
          chunk(
            {
              tool_calls: [
                {
                  index,
                  id: t.id,
                  type: 'function',
                  function: { name: t.function.name, arguments: '' },
                },
              ],
            },
            null,
          ),
        ),
      );
      for (const piece of split(t.function.arguments)) {
        events.push(
          sseData(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }, null)),
        );
      }
    });
    events.push(sseData(chunk({}, finish)));
    if (includeUsage) events.push(sseData({ ...base, choices: [], usage: openAiUsage(r.usage) }));
    events.push('data: [DONE]\n\n');
    sendSse(res, events);
  }

  // ---- OpenAI Responses ---------------------------------------------------------------------

  function responses(
    res: ServerResponse,
    r: ScriptedReply,
    model: string,
    stream: boolean,
    body: Record<string, unknown>,
  ): void {
    const id = r.id ?? nextId('resp_fake');
    const created_at = Math.floor(Date.now() / 1000);
    const incompleteReason =
      r.finishReason === 'max_output_tokens' || r.finishReason === 'content_filter'
        ? r.finishReason
        : null;
    const status = incompleteReason ? 'incomplete' : 'completed';
    const prompt = r.usage.fresh + (r.usage.cacheRead ?? 0) + (r.usage.cacheWrite ?? 0);
    const usage = {
      input_tokens: prompt,
      input_tokens_details: {
        cached_tokens: r.usage.cacheRead ?? 0,
        ...(r.usage.cacheWrite ? { cache_write_tokens: r.usage.cacheWrite } : {}),
      },
      output_tokens: r.usage.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: prompt + r.usage.output,
    };
    const output: Record<string, unknown>[] = [];
    if (r.text !== undefined) {
      output.push({
        type: 'message',
        id: nextId('msg_fake'),
        status: incompleteReason ? 'incomplete' : 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: r.text, annotations: [], logprobs: [] }],
      });
    }
    for (const t of r.toolCalls ?? []) {
      output.push({
        type: 'function_call',
        id: nextId('fc_fake'),
        call_id: t.id,
        name: t.name,
        arguments: JSON.stringify(t.input),
        status: 'completed',
      });
    }
    const full = {
      id,
      object: 'response',
      created_at,
      status,
      error: null,
      incomplete_details: incompleteReason ? { reason: incompleteReason } : null,
      instructions: null,
      max_output_tokens: null,
      model,
      output,
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      store: true,
      temperature: 1,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: [],
      top_p: 1,
      truncation: 'disabled',
      usage,
      user: null,
      metadata: {},
      // the Responses API echoes the conversation the request named (string id or { id })
      ...(body.conversation
        ? {
            conversation: {
              id:
                typeof body.conversation === 'string'
                  ? body.conversation
                  : (body.conversation as { id: string }).id,
            },
          }
        : {}),
    };
    if (!stream) return sendJson(res, 200, full);

    let n = 0;
    const events: string[] = [];
    const ev = (type: string, data: Record<string, unknown>) =>
      events.push(sseEvent(type, { type, sequence_number: n++, ...data }));
    const shell = {
      ...full,
      status: 'in_progress',
      output: [],
      usage: null,
      incomplete_details: null,
    };
    ev('response.created', { response: shell });
    ev('response.in_progress', { response: shell });
    output.forEach((item, output_index) => {
      if (item.type === 'message') {
        const text = r.text ?? '';
        ev('response.output_item.added', {
          output_index,
          item: { ...item, status: 'in_progress', content: [] },
        });
        const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
        ev('response.content_part.added', {
          item_id: item.id,
          output_index,
          content_index: 0,
          part,
        });
        for (const delta of split(text)) {
          ev('response.output_text.delta', {
            item_id: item.id,
            output_index,
            content_index: 0,
            delta,
            logprobs: [],
          });
        }
        ev('response.output_text.done', {
          item_id: item.id,
          output_index,
          content_index: 0,
          text,
          logprobs: [],
        });
        ev('response.content_part.done', {
          item_id: item.id,
          output_index,
          content_index: 0,
          part: { ...part, text },
        });
        ev('response.output_item.done', { output_index, item });
      } else {
        const args = String(item.arguments);
        ev('response.output_item.added', {
          output_index,
          item: { ...item, arguments: '', status: 'in_progress' },
        });
        for (const delta of split(args)) {
          ev('response.function_call_arguments.delta', { item_id: item.id, output_index, delta });
        }
        ev('response.function_call_arguments.done', {
          item_id: item.id,
          output_index,
          arguments: args,
        });
        ev('response.output_item.done', { output_index, item });
      }
    });
    ev(incompleteReason ? 'response.incomplete' : 'response.completed', { response: full });
    sendSse(res, events);
  }

  // ---- Anthropic messages -------------------------------------------------------------------

  function messages(res: ServerResponse, r: ScriptedReply, model: string, stream: boolean): void {
    const id = r.id ?? nextId('msg_fake');
    const stop = r.finishReason ?? (r.toolCalls?.length ? 'tool_use' : 'end_turn');
    const content: Record<string, unknown>[] = [];
    if (r.text !== undefined) content.push({ type: 'text', text: r.text });
    for (const t of r.toolCalls ?? [])
      content.push({ type: 'tool_use', id: t.id, name: t.name, input: t.input });
    const usage = {
      input_tokens: r.usage.fresh,
      cache_creation_input_tokens: r.usage.cacheWrite ?? 0,
      cache_read_input_tokens: r.usage.cacheRead ?? 0,
      cache_creation: {
        ephemeral_5m_input_tokens: r.usage.cacheWrite ?? 0,
        ephemeral_1h_input_tokens: 0,
      },
      output_tokens: r.usage.output,
      service_tier: 'standard',
    };
    if (!stream) {
      return sendJson(res, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content,
        stop_reason: stop,
        stop_sequence: null,
        usage,
      });
    }
    const events: string[] = [];
    const ev = (type: string, data: Record<string, unknown>) =>
      events.push(sseEvent(type, { type, ...data }));
    ev('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    content.forEach((block, index) => {
      if (block.type === 'text') {
        ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
        ev('ping', {});
        for (const text of split(String(block.text))) {
          ev('content_block_delta', { index, delta: { type: 'text_delta', text } });
        }
      } else {
        ev('content_block_start', { index, content_block: { ...block, input: {} } });
        for (const partial_json of split(JSON.stringify(block.input))) {
          ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } });
        }
      }
      ev('content_block_stop', { index });
    });
    ev('message_delta', {
      delta: { stop_reason: stop, stop_sequence: null },
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens,
        output_tokens: usage.output_tokens,
      },
    });
    ev('message_stop', {});
    sendSse(res, events);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...replies) => queue.push(...replies),
    pending: () => queue.length,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

// ---- helpers ----------------------------------------------------------------------------------

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-request-id': `req_fake_${Date.now().toString(36)}`,
    'request-id': `req_fake_${Date.now().toString(36)}`,
  });
  res.end(text);
}

function sendSse(res: ServerResponse, events: string[]): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  for (const e of events) res.write(e);
  res.end();
}

function sseData(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

function sseEvent(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Splits text into a few deltas, so streams carry more than one chunk. */
function split(text: string): string[] {
  if (text.length <= 4) return text ? [text] : [];
  const size = Math.ceil(text.length / 3);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
