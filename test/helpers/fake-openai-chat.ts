/**
 * A scripted fake of the OpenAI Chat Completions API (`POST /v1/chat/completions`, SSE when the
 * body streams, with the usage chunk), for driving the real Qwen Code offline
 * (test/e2e/qwen-code-real; modelled on ../shared/agent-harness/qwen-sdk/fake-openai-chat.mjs).
 * Each request is classed, in this order, as the history compressor's (its last user message or
 * system prompt asks for the `<state_snapshot>` XML), the managed memory extractor's (a user
 * message "Managed memory has TWO directories"), the main thread's (a request that offers tools),
 * or an auxiliary one, and answered with the next scripted answer of that queue. It listens on a
 * Unix socket or on 127.0.0.1 only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenFake, type FakeListen } from './fake-listen.ts';

/** Token usage of one answer: fixed numbers, or `estimate` (request bytes / 4). */
export type ChatUsage =
  { prompt: number; output?: number; cached?: number } | { estimate: true; output?: number };

/** One scripted answer. */
export interface ChatAnswer {
  label?: string;
  text?: string;
  /** A tool call; `__WORK__` in its arguments becomes the work dir. */
  toolCall?: { name: string; args: Record<string, unknown>; cutAt?: number };
  /** The OpenAI finish reason. Default: `tool_calls` with a tool call, else `stop`. */
  finishReason?: string;
  usage?: ChatUsage;
}

export interface ChatScript {
  main: ChatAnswer[];
  /** The compressor's requests; default a short `<state_snapshot>`, usage estimated. */
  compress?: ChatAnswer[];
  /** The memory extractor's requests; default a short text, usage estimated. */
  memory?: ChatAnswer[];
  /** When the main queue is empty. Default: a short final text. */
  fallback?: ChatAnswer;
}

/** One request as the fake saw it. */
export interface ChatRequest {
  kind: string;
  model: string | null;
  maxTokens: number | null;
  messages: number;
  bodyBytes: number;
  answer: string;
}

export interface FakeOpenAiChat {
  url: string | null;
  requests: ChatRequest[];
  close(): Promise<void>;
}

const SNAPSHOT =
  '<analysis>The user asked to read files; they were read.</analysis>\n<state_snapshot>\n' +
  '<overall_goal>Inspect the project and report.</overall_goal>\n' +
  '<key_knowledge>Files were read; tools ran.</key_knowledge>\n' +
  '<current_plan>1. [DONE] read files 2. [TODO] report</current_plan>\n</state_snapshot>';

type Json = Record<string, unknown>;
type Message = { role?: string; content?: unknown };

function textOf(m: Message | undefined): string {
  if (!m) return '';
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content))
    return m.content.map((c: Json) => (typeof c?.text === 'string' ? c.text : '')).join('\n');
  return '';
}

function classify(body: Json): string {
  const messages = (body.messages ?? []) as Message[];
  const system = messages
    .filter((m) => m.role === 'system')
    .map(textOf)
    .join('\n');
  const users = messages.filter((m) => m.role === 'user');
  const last = textOf(users.at(-1));
  if ((last + system).includes('<state_snapshot> XML')) return 'compress';
  if (users.some((m) => textOf(m).includes('Managed memory has TWO directories'))) return 'memory';
  return Array.isArray(body.tools) && body.tools.length > 0 ? 'main' : 'aux';
}

export function startFakeOpenAiChat(
  script: ChatScript,
  listen: FakeListen,
  workDir: string,
): Promise<FakeOpenAiChat> {
  const queues: Record<string, ChatAnswer[]> = {
    main: [...script.main],
    compress: [...(script.compress ?? [])],
    memory: [...(script.memory ?? [])],
  };
  const requests: ChatRequest[] = [];
  let ids = 0;
  const newId = (prefix: string) => `${prefix}${(++ids).toString(36).padStart(8, '0')}`;

  const answerOf = (kind: string): ChatAnswer => {
    const next = queues[kind]?.shift();
    if (next) return next;
    if (kind === 'compress') return { text: SNAPSHOT, usage: { estimate: true, output: 300 } };
    if (kind === 'memory') return { text: 'Nothing to remember.', usage: { estimate: true } };
    if (kind === 'aux') return { text: 'OK', usage: { prompt: 500, output: 5 } };
    return script.fallback ?? { text: 'Done.', usage: { estimate: true } };
  };

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
    const kind = classify(body);
    const answer = answerOf(kind);
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
    const text = answer.text ?? (call ? undefined : kind === 'compress' ? SNAPSHOT : 'OK.');
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
    if (!body.stream) {
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
      event([
        {
          index: 0,
          delta: {
            tool_calls: [
              {
                index: 0,
                id: newId('call_'),
                type: 'function',
                function: { name: call.name, arguments: '' },
              },
            ],
          },
          finish_reason: null,
        },
      ]);
      event([
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, function: { arguments: args } }] },
          finish_reason: null,
        },
      ]);
    }
    event([{ index: 0, delta: {}, finish_reason: finish }]);
    event([], { usage });
    res.write('data: [DONE]\n\n');
    res.end();
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks).toString('utf8'));
      } catch (error) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(error) } }));
      }
    });
  });
  return listenFake(server, listen).then(({ url, close }) => ({ url, requests, close }));
}
