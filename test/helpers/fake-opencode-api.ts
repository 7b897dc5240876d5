/**
 * A scripted fake of the OpenAI Chat Completions API (`POST /v1/chat/completions`, SSE with the
 * usage chunk) for driving the real OpenCode offline (test/e2e/opencode-real; modelled on
 * ../shared/agent-harness/opencode-copilot/fake-openai-chat.mjs). Each request is classed as
 * OpenCode's compaction summary (its last user message starts "Here is the conversation so
 * far:"), its title generator (system prompt "You are a title generator"), or the main thread,
 * and answered with the next scripted answer of that queue. It listens on a Unix socket or on
 * 127.0.0.1 only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenFake, type FakeListen } from './fake-listen.ts';

/** Token usage of one answer: fixed numbers, or `estimate` (request bytes / 4). */
export type OpenCodeUsage =
  { prompt: number; output?: number; cached?: number } | { estimate: true; output?: number };

/** One scripted answer. */
export interface OpenCodeAnswer {
  label?: string;
  text?: string;
  /** A tool call; `__WORK__` in its arguments becomes the work dir; `cutAt` cuts its JSON. */
  toolCall?: { name: string; args: Record<string, unknown>; cutAt?: number };
  /** The OpenAI finish reason. Default: `tool_calls` with a tool call, else `stop`. */
  finishReason?: string;
  usage?: OpenCodeUsage;
}

export interface OpenCodeScript {
  main: OpenCodeAnswer[];
  /** The compaction summary requests; default a short summary, usage estimated. */
  summary?: OpenCodeAnswer[];
  /** When the main queue is empty. Default: a short final text. */
  fallback?: OpenCodeAnswer;
}

/** One request as the fake saw it. */
export interface OpenCodeRequest {
  kind: 'main' | 'summary' | 'title';
  model: string | null;
  maxTokens: number | null;
  messages: number;
  bodyBytes: number;
  answer: string;
}

export interface FakeOpenCodeApi {
  url: string | null;
  requests: OpenCodeRequest[];
  close(): Promise<void>;
}

const SUMMARY =
  '## Goal\nInspect the files in the working directory.\n## Progress\nThe files were read.\n' +
  '## Next\nReport the findings to the user.';

type Json = Record<string, unknown>;
type Message = { role?: string; content?: unknown };

function textOf(m: Message | undefined): string {
  if (!m) return '';
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content))
    return m.content.map((c: Json) => (typeof c?.text === 'string' ? c.text : '')).join('\n');
  return '';
}

function classify(body: Json): OpenCodeRequest['kind'] {
  const messages = (body.messages ?? []) as Message[];
  const system = messages
    .filter((m) => m.role === 'system')
    .map(textOf)
    .join('\n');
  const last = textOf(messages.filter((m) => m.role === 'user').at(-1));
  if (last.startsWith('Here is the conversation so far:')) return 'summary';
  if (system.includes('You are a title generator')) return 'title';
  return 'main';
}

export function startFakeOpenCodeApi(
  script: OpenCodeScript,
  listen: FakeListen,
  workDir: string,
): Promise<FakeOpenCodeApi> {
  const queues = { main: [...script.main], summary: [...(script.summary ?? [])] };
  const requests: OpenCodeRequest[] = [];
  let ids = 0;
  const newId = (prefix: string) => `${prefix}${(++ids).toString(36).padStart(8, '0')}`;

  const answerOf = (kind: OpenCodeRequest['kind']): OpenCodeAnswer => {
    if (kind === 'title') return { text: 'Inspect files', usage: { prompt: 500, output: 5 } };
    const next = queues[kind].shift();
    if (next) return next;
    if (kind === 'summary') return { text: SUMMARY, usage: { estimate: true, output: 300 } };
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
    let args = call ? JSON.stringify(call.args).split('__WORK__').join(workDir) : '';
    if (call?.cutAt !== undefined) args = args.slice(0, call.cutAt);
    const finish = answer.finishReason ?? (call ? 'tool_calls' : 'stop');
    const text = answer.text ?? (call ? undefined : 'OK.');
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
