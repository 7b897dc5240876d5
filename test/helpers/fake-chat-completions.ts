/**
 * A scripted fake of the OpenAI Chat Completions API (`POST /v1/chat/completions`, SSE when the
 * body streams, with the usage chunk; `GET …/models` an empty list), for driving a real agent CLI
 * offline. The agent's own fake says how its requests are classed and answered
 * (./fake-openai-chat.ts for Qwen Code, ./fake-opencode-api.ts for OpenCode); this is the
 * protocol they share: the usage (fixed, or estimated from the request's bytes), the tool call
 * (`__WORK__` in its arguments becomes the work dir, `cutAt` cuts its JSON), the record of each
 * request, and the answer as one JSON body or as chunks. It listens on a Unix socket or on
 * 127.0.0.1 only.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bodyServer, listenFake, type FakeListen } from './fake-listen.ts';

/** Token usage of one answer: fixed numbers, or `estimate` (request bytes / 4). */
export type ChatUsage =
  { prompt: number; output?: number; cached?: number } | { estimate: true; output?: number };

/** One scripted answer. */
export interface ChatAnswer {
  label?: string;
  text?: string;
  /** A tool call; `__WORK__` in its arguments becomes the work dir; `cutAt` cuts its JSON. */
  toolCall?: { name: string; args: Record<string, unknown>; cutAt?: number };
  /** The OpenAI finish reason. Default: `tool_calls` with a tool call, else `stop`. */
  finishReason?: string;
  usage?: ChatUsage;
}

/** One request as the fake saw it. */
export interface ChatRequest<Kind extends string = string> {
  kind: Kind;
  model: string | null;
  maxTokens: number | null;
  messages: number;
  bodyBytes: number;
  answer: string;
}

export interface FakeChat<Kind extends string = string> {
  url: string | null;
  requests: Array<ChatRequest<Kind>>;
  close(): Promise<void>;
}

export type Json = Record<string, unknown>;
export type Message = { role?: string; content?: unknown };

/** How one agent's requests are told apart and answered. */
export interface ChatAgent<Kind extends string> {
  /** The kind of a request, from its body. */
  classify(body: Json): Kind;
  /** The answer to a request of `kind` (the next scripted one, or the agent's default). */
  answerOf(kind: Kind): ChatAnswer;
  /** The text of an answer that sets none and calls no tool. Default `OK.`. */
  defaultText?: (kind: Kind) => string;
  /** Answers in chunks even when the request does not stream (OpenCode always streams). */
  alwaysStream?: boolean;
}

/** A message's text: its string content, or its parts' texts joined by new lines. */
export function textOf(m: Message | undefined): string {
  if (!m) return '';
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content))
    return m.content.map((c: Json) => (typeof c?.text === 'string' ? c.text : '')).join('\n');
  return '';
}

/** The request's system prompt(s) and its messages. */
export function messagesOf(body: Json): { messages: Message[]; system: string } {
  const messages = (body.messages ?? []) as Message[];
  const system = messages
    .filter((m) => m.role === 'system')
    .map(textOf)
    .join('\n');
  return { messages, system };
}

export function startFakeChat<Kind extends string>(
  agent: ChatAgent<Kind>,
  listen: FakeListen,
  workDir: string,
): Promise<FakeChat<Kind>> {
  const requests: Array<ChatRequest<Kind>> = [];
  let ids = 0;
  const newId = (prefix: string) => `${prefix}${(++ids).toString(36).padStart(8, '0')}`;

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (req.method !== 'POST' || !url.pathname.endsWith('/chat/completions')) {
      res.writeHead(url.pathname.endsWith('/models') ? 200 : 404, {
        'content-type': 'application/json',
      });
      res.end(JSON.stringify({ object: 'list', data: [] }));
      return;
    }
    const body = JSON.parse(raw) as Json;
    const kind = agent.classify(body);
    const answer = agent.answerOf(kind);
    const u = answer.usage ?? { estimate: true };
    const prompt = 'estimate' in u ? Math.max(1, Math.ceil(raw.length / 4)) : u.prompt;
    const output = u.output ?? 20;
    const usage = {
      prompt_tokens: prompt,
      completion_tokens: output,
      total_tokens: prompt + output,
      prompt_tokens_details: { cached_tokens: 'cached' in u ? (u.cached ?? 0) : 0 },
    };
    const call = answer.toolCall;
    let args = call
      ? JSON.stringify(call.args).split('__WORK__').join(workDir.replace(/\\/g, '\\\\'))
      : '';
    if (call?.cutAt !== undefined) args = args.slice(0, call.cutAt);
    const finish = answer.finishReason ?? (call ? 'tool_calls' : 'stop');
    const text = answer.text ?? (call ? undefined : (agent.defaultText?.(kind) ?? 'OK.'));
    requests.push({
      kind,
      model: typeof body.model === 'string' ? body.model : null,
      maxTokens: typeof body.max_tokens === 'number' ? body.max_tokens : null,
      messages: Array.isArray(body.messages) ? body.messages.length : 0,
      bodyBytes: raw.length,
      answer: `${answer.label ? `${answer.label}: ` : ''}${call ? `call ${call.name} ` : ''}${finish} ${prompt}`,
    });
    const id = newId('chatcmpl-');
    const model = body.model;
    const created = Math.floor(Date.now() / 1000);
    if (!body.stream && !agent.alwaysStream) {
      const message: Json = { role: 'assistant', content: text ?? null };
      if (call)
        message.tool_calls = [
          { id: newId('call_'), type: 'function', function: { name: call.name, arguments: args } },
        ];
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created,
          model,
          choices: [{ index: 0, message, finish_reason: finish }],
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const event = (choices: unknown[], extra: Json = {}) =>
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`,
      );
    event([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
    if (text !== undefined) event([{ index: 0, delta: { content: text }, finish_reason: null }]);
    if (call) {
      const delta = (d: Json) =>
        event([{ index: 0, delta: { tool_calls: [d] }, finish_reason: null }]);
      delta({
        index: 0,
        id: newId('call_'),
        type: 'function',
        function: { name: call.name, arguments: '' },
      });
      delta({ index: 0, function: { arguments: args } });
    }
    event([{ index: 0, delta: {}, finish_reason: finish }]);
    event([], { usage });
    res.write('data: [DONE]\n\n');
    res.end();
  };

  const server = bodyServer(handle, (res, error) => {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: String(error) } }));
  });
  return listenFake(server, listen).then(({ url, close }) => ({ url, requests, close }));
}
