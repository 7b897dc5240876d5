/**
 * A scripted fake of the Anthropic Messages API, for driving the real Claude Code CLI offline
 * (test/e2e/claude-code-real). It answers what the CLI sends: `HEAD /` (the preflight of
 * 2.1.197; 2.1.332 sends none), `POST /v1/messages` streamed as server-sent events (or plain
 * JSON), `POST /v1/messages/count_tokens`, and errors (e.g. a 400 "prompt is too long"). Each
 * request is classed, in this order, as a compaction request (the CLI asks for "a detailed
 * summary of the conversation"), a routed queue (a sub-agent's first user message, or the last
 * user message, e.g. 2.1.332's notification that a background agent finished), the main thread
 * (a request that offers tools: 2.1.197 sends 26 up front, 2.1.332 sends 14 and the rest through
 * ToolSearch), or an auxiliary request (no tools: a title or a topic; neither version sends one
 * in `-p` mode), and answered with the next scripted answer of that queue. It listens on a Unix
 * socket or on 127.0.0.1 only.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bodyServer, listenFake, type FakeListen } from './fake-listen.ts';

/** Token usage of one answer: fixed numbers, or `estimate` (request bytes / 4, warm cache). */
export type FakeUsage =
  | {
      input_tokens: number;
      cache_creation_input_tokens?: number;
      cache_read_input_tokens?: number;
      output_tokens?: number;
    }
  | { estimate: true; output_tokens?: number };

/** One scripted answer. */
export interface FakeAnswer {
  /** Shown in the request log. */
  label?: string;
  text?: string;
  /** A tool call; `truncateJsonAt` cuts its streamed JSON arguments (a cut-off tool call). */
  toolUse?: { name: string; input: Record<string, unknown>; truncateJsonAt?: number };
  /** Default: `tool_use` when the answer has a tool call, else `end_turn`. */
  stopReason?: string;
  usage?: FakeUsage;
  /** Answer with this HTTP error instead. */
  error?: { status: number; type?: string; message: string };
}

/** What the fake answers, per queue. `__WORK__` in tool inputs becomes `workDir`. */
export interface FakeScript {
  main: FakeAnswer[];
  /** Compaction (summary) requests; default a short canned summary. */
  compact?: FakeAnswer[];
  /**
   * Requests whose first (or last) user message includes the text go to `queue`; the first
   * route that matches wins (an empty queue answers with `fallback`).
   */
  routes?: Array<{ queue: string; firstUserIncludes?: string; lastUserIncludes?: string }>;
  queues?: Record<string, FakeAnswer[]>;
  /** Requests without tools that are neither compactions nor routed; default a short text. */
  aux?: FakeAnswer[];
  /** When a queue is empty. Default: a short final text. */
  fallback?: FakeAnswer;
}

/** One request as the fake saw it. */
export interface FakeRequest {
  method: string;
  path: string;
  kind: string;
  model: string | null;
  bodyBytes: number;
  answer: string;
  /**
   * The text of the request's last user message (its text blocks and its tool results' text),
   * to see what reached the model after a tool ran (a hook's message, a narrowed Read).
   */
  lastUserText?: string;
  /** The whole request body as sent. */
  body?: string;
}

export interface FakeAnthropic {
  /** `http://127.0.0.1:PORT` when listening on TCP, else null. */
  url: string | null;
  requests: FakeRequest[];
  close(): Promise<void>;
}

const SUMMARY =
  '<analysis>The user asked for work on files; tools ran.</analysis>\n<summary>\n' +
  '1. Primary Request and Intent: inspect the working directory and report.\n' +
  '2. Pending Tasks: continue the task.\n3. Current Work: reading files.\n</summary>';

type Json = Record<string, unknown>;

/** The text blocks of a message's content; with `toolResults`, its tool results' text as well. */
function textOf(content: unknown, toolResults = false): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b: Json) =>
      b.type === 'text'
        ? String(b.text)
        : b.type === 'tool_result' && toolResults
          ? textOf(b.content, true)
          : '',
    )
    .join('\n');
}

function lastUserText(body: Json, toolResults = false): string {
  const messages = (body.messages ?? []) as Json[];
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'user') return textOf(messages[i]!.content, toolResults);
  }
  return '';
}

/** A compaction request: Claude Code asks for a detailed summary of the conversation. */
function isCompaction(body: Json): boolean {
  return /detailed summary of (this|the) conversation|summary of the conversation so far/i.test(
    lastUserText(body),
  );
}

export function startFakeAnthropic(
  script: FakeScript,
  listen: FakeListen,
  workDir: string,
): Promise<FakeAnthropic> {
  const queues: Record<string, FakeAnswer[]> = {
    main: [...script.main],
    compact: [...(script.compact ?? [])],
    aux: [...(script.aux ?? [])],
  };
  for (const [name, answers] of Object.entries(script.queues ?? {})) queues[name] = [...answers];
  const requests: FakeRequest[] = [];
  const lastEstimate: Record<string, number> = {};
  // Unique across fakes, as the real API's ids are: rotscope keys calls by request and message
  // id and tool results by tool_use id, so sessions that shared ids would be merged.
  const instance = randomBytes(5).toString('hex');
  let ids = 0;
  const newId = (prefix: string) =>
    `${prefix}_fake${instance}${(++ids).toString(36).padStart(4, '0')}`;

  const classify = (body: Json): string => {
    if (isCompaction(body)) return 'compact';
    const first = textOf(((body.messages ?? []) as Json[])[0]?.content);
    const last = lastUserText(body);
    for (const r of script.routes ?? []) {
      if (r.firstUserIncludes !== undefined && !first.includes(r.firstUserIncludes)) continue;
      if (r.lastUserIncludes !== undefined && !last.includes(r.lastUserIncludes)) continue;
      return r.queue;
    }
    const tools = body.tools;
    return Array.isArray(tools) && tools.length > 0 ? 'main' : 'aux';
  };

  const usageOf = (answer: FakeAnswer, bytes: number, kind: string) => {
    const u = answer.usage ?? { estimate: true };
    if (!('estimate' in u)) {
      return {
        input_tokens: u.input_tokens,
        cache_creation_input_tokens: u.cache_creation_input_tokens ?? 0,
        cache_read_input_tokens: u.cache_read_input_tokens ?? 0,
        output_tokens: u.output_tokens ?? 20,
      };
    }
    const estimate = Math.max(1, Math.ceil(bytes / 4));
    const cached = Math.min(lastEstimate[kind] ?? 0, estimate);
    lastEstimate[kind] = estimate;
    const fresh = Math.min(estimate - cached, 8);
    return {
      input_tokens: fresh,
      cache_creation_input_tokens: estimate - cached - fresh,
      cache_read_input_tokens: cached,
      output_tokens: u.output_tokens ?? 20,
    };
  };

  const sendJson = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': newId('req') });
    res.end(JSON.stringify(body));
  };

  const answerMessages = (res: ServerResponse, raw: string) => {
    let body: Json;
    try {
      body = JSON.parse(raw) as Json;
    } catch {
      return sendJson(res, 400, {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'body is not JSON' },
      });
    }
    const kind = classify(body);
    const answer: FakeAnswer =
      kind === 'compact'
        ? (queues.compact!.shift() ?? { text: SUMMARY, usage: { estimate: true } })
        : kind === 'aux'
          ? (queues.aux!.shift() ?? { text: 'Untitled.', usage: { estimate: true } })
          : (queues[kind]?.shift() ?? script.fallback ?? { text: 'Done.' });
    const model = typeof body.model === 'string' ? body.model : 'claude-sonnet-4-6';
    const log = (what: string) =>
      requests.push({
        method: 'POST',
        path: '/v1/messages',
        kind,
        model,
        bodyBytes: raw.length,
        answer: answer.label ? `${answer.label}: ${what}` : what,
        lastUserText: lastUserText(body, true),
        body: raw,
      });
    if (answer.error) {
      log(`error ${answer.error.status}`);
      return sendJson(res, answer.error.status, {
        type: 'error',
        error: {
          type: answer.error.type ?? 'invalid_request_error',
          message: answer.error.message,
        },
      });
    }
    const blocks: Json[] = [];
    if (answer.text !== undefined) blocks.push({ type: 'text', text: answer.text });
    if (answer.toolUse) {
      const input = JSON.parse(
        JSON.stringify(answer.toolUse.input).split('__WORK__').join(workDir),
      ) as Json;
      blocks.push({ type: 'tool_use', id: newId('toolu'), name: answer.toolUse.name, input });
    }
    if (blocks.length === 0) blocks.push({ type: 'text', text: 'OK.' });
    const stopReason = answer.stopReason ?? (answer.toolUse ? 'tool_use' : 'end_turn');
    const usage = usageOf(answer, raw.length, kind);
    log(`${blocks.map((b) => b.type).join('+')} ${stopReason}`);
    const messageId = newId('msg');
    if (body.stream !== true) {
      return sendJson(res, 200, {
        id: messageId,
        type: 'message',
        role: 'assistant',
        model,
        content: blocks,
        stop_reason: stopReason,
        stop_sequence: null,
        usage,
      });
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'request-id': newId('req'),
    });
    const event = (type: string, data: Json) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event('message_start', {
      message: {
        id: messageId,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    event('ping', {});
    blocks.forEach((block, index) => {
      if (block.type === 'text') {
        event('content_block_start', { index, content_block: { type: 'text', text: '' } });
        event('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
      } else {
        event('content_block_start', {
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        });
        let json = JSON.stringify(block.input);
        const cut = answer.toolUse?.truncateJsonAt;
        if (cut !== undefined) json = json.slice(0, cut);
        event('content_block_delta', {
          index,
          delta: { type: 'input_json_delta', partial_json: json },
        });
      }
      event('content_block_stop', { index });
    });
    event('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage });
    event('message_stop', {});
    res.end();
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    if (req.method === 'POST' && path === '/v1/messages') return answerMessages(res, raw);
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
      requests.push({
        method: 'POST',
        path,
        kind: 'count_tokens',
        model: null,
        bodyBytes: raw.length,
        answer: 'count',
      });
      return sendJson(res, 200, { input_tokens: Math.ceil(raw.length / 4) });
    }
    requests.push({
      method: req.method ?? '?',
      path,
      kind: 'other',
      model: null,
      bodyBytes: raw.length,
      answer: 'empty',
    });
    if (req.method === 'HEAD') {
      res.writeHead(200);
      return res.end();
    }
    return sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: path } });
  };

  const server = bodyServer(handle, (res, error) => {
    sendJson(res, 500, { type: 'error', error: { type: 'api_error', message: String(error) } });
  });
  return listenFake(server, listen).then(({ url, close }) => ({ url, requests, close }));
}
