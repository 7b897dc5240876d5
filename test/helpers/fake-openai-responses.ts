/**
 * A scripted fake of the OpenAI Responses API, for driving the real Codex CLI offline
 * (test/e2e/codex-real). It answers what Codex 0.171.0 sends to a custom `model_provider` with
 * `wire_api = "responses"`: `POST /v1/responses` streamed as server-sent events, and
 * `POST /v1/analytics/*` (Codex reports turn costs to the provider's base URL; answered `{}`).
 *
 * Each `/v1/responses` request is classed, in this order, as a compaction request (an input
 * message starts "You are performing a CONTEXT CHECKPOINT COMPACTION", conventions §5.0.2), a
 * routed queue (the last user message includes a text), or the main thread, and answered with
 * the next scripted answer of that queue: text, a function call (Codex's shell tool is the
 * function `exec_command`), usage with cached tokens, an `incomplete` response
 * (`reason: max_output_tokens`, cut text or cut call arguments), or an HTTP error. It listens on
 * a Unix socket or on 127.0.0.1 only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenFake, type FakeListen } from './fake-listen.ts';

/**
 * Token usage of one answer: fixed numbers (`input_tokens` includes `cached_tokens`, as the
 * Responses API counts), or `estimate` (request bytes / 4; the previous request's estimate
 * counts as cached).
 */
export type FakeResponsesUsage =
  | {
      input_tokens: number;
      cached_tokens?: number;
      output_tokens?: number;
      reasoning_tokens?: number;
    }
  | { estimate: true; output_tokens?: number };

/** One scripted answer. */
export interface FakeResponsesAnswer {
  /** Shown in the request log. */
  label?: string;
  text?: string;
  /**
   * A function call (`exec_command` runs a shell command: `{ cmd: "ls" }`); `__WORK__` in the
   * arguments becomes the work dir.
   */
  call?: { name: string; arguments: Record<string, unknown> };
  /**
   * Cut the answer at the output limit: the response ends `incomplete` with reason
   * `max_output_tokens`; `cutAt` characters of the text or of the call's JSON arguments are sent.
   */
  incomplete?: { cutAt: number };
  usage?: FakeResponsesUsage;
  /** Answer with this HTTP error instead. */
  error?: { status: number; message: string };
  /** Wait this long before answering (so telemetry batches split mid-run). */
  delayMs?: number;
}

/** What the fake answers, per queue. */
export interface FakeResponsesScript {
  main: FakeResponsesAnswer[];
  /** Compaction requests; default a short canned summary. */
  compact?: FakeResponsesAnswer[];
  /** Requests whose last user message includes the text go to `queue`; the first match wins. */
  routes?: Array<{ queue: string; lastUserIncludes: string }>;
  queues?: Record<string, FakeResponsesAnswer[]>;
  /** When a queue is empty. Default: a short final text. */
  fallback?: FakeResponsesAnswer;
}

/** One request as the fake saw it. */
export interface FakeResponsesRequest {
  method: string;
  path: string;
  kind: string;
  model: string | null;
  bodyBytes: number;
  /** The tool-call outputs the request carried back (`function_call_output`), by call id: characters. */
  toolOutputs: Record<string, number>;
  answer: string;
}

export interface FakeOpenAiResponses {
  /** `http://127.0.0.1:PORT` when listening on TCP, else null. */
  url: string | null;
  requests: FakeResponsesRequest[];
  /** The raw bodies of `/v1/responses` requests, in order (for captures). */
  bodies: string[];
  close(): Promise<void>;
}

/** How Codex's compaction prompt starts (conventions §5.0.2). */
export const COMPACTION_PROMPT_START = 'You are performing a CONTEXT CHECKPOINT COMPACTION';

const SUMMARY =
  'Summary of the work so far: the user asked to inspect the working directory; shell ' +
  'commands ran and printed logs. Next: continue the task.';

type Json = Record<string, unknown>;

function textsOf(item: Json): string[] {
  const content = item.content;
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return (content as Json[]).flatMap((part) => (typeof part.text === 'string' ? [part.text] : []));
}

function userTexts(body: Json): string[] {
  const input = Array.isArray(body.input) ? (body.input as Json[]) : [];
  return input
    .filter((item) => item.type === 'message' && item.role === 'user')
    .map((item) => textsOf(item).join('\n'));
}

/** A compaction request: one of its input messages (or its instructions) starts with the prompt. */
function isCompaction(body: Json): boolean {
  if (
    typeof body.instructions === 'string' &&
    body.instructions.startsWith(COMPACTION_PROMPT_START)
  )
    return true;
  const input = Array.isArray(body.input) ? (body.input as Json[]) : [];
  return input.some(
    (item) =>
      item.type === 'message' &&
      textsOf(item).some((t) => t.trimStart().startsWith(COMPACTION_PROMPT_START)),
  );
}

function toolOutputsOf(body: Json): Record<string, number> {
  const out: Record<string, number> = {};
  const input = Array.isArray(body.input) ? (body.input as Json[]) : [];
  for (const item of input) {
    if (item.type !== 'function_call_output' && item.type !== 'custom_tool_call_output') continue;
    const output = item.output;
    const size =
      typeof output === 'string'
        ? output.length
        : Array.isArray(output)
          ? (output as Json[]).reduce(
              (n, part) => n + (typeof part.text === 'string' ? part.text.length : 0),
              0,
            )
          : JSON.stringify(output ?? '').length;
    out[String(item.call_id)] = size;
  }
  return out;
}

export function startFakeOpenAiResponses(
  script: FakeResponsesScript,
  listen: FakeListen,
  workDir: string,
): Promise<FakeOpenAiResponses> {
  const queues: Record<string, FakeResponsesAnswer[]> = {
    main: [...script.main],
    compact: [...(script.compact ?? [])],
  };
  for (const [name, answers] of Object.entries(script.queues ?? {})) queues[name] = [...answers];
  const requests: FakeResponsesRequest[] = [];
  const bodies: string[] = [];
  const lastEstimate: Record<string, number> = {};
  let ids = 0;
  const newId = (prefix: string) => `${prefix}_fake${(++ids).toString(36).padStart(6, '0')}`;

  const classify = (body: Json): string => {
    if (isCompaction(body)) return 'compact';
    const last = userTexts(body).at(-1) ?? '';
    for (const r of script.routes ?? []) if (last.includes(r.lastUserIncludes)) return r.queue;
    return 'main';
  };

  const usageOf = (answer: FakeResponsesAnswer, bytes: number, kind: string) => {
    const u = answer.usage ?? { estimate: true };
    if (!('estimate' in u)) {
      const output = u.output_tokens ?? 20;
      return {
        input_tokens: u.input_tokens,
        input_tokens_details: { cached_tokens: u.cached_tokens ?? 0 },
        output_tokens: output,
        output_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
        total_tokens: u.input_tokens + output,
      };
    }
    const estimate = Math.max(1, Math.ceil(bytes / 4));
    const cached = Math.min(lastEstimate[kind] ?? 0, estimate);
    lastEstimate[kind] = estimate;
    const output = u.output_tokens ?? 20;
    return {
      input_tokens: estimate,
      input_tokens_details: { cached_tokens: cached },
      output_tokens: output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: estimate + output,
    };
  };

  const sendJson = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': newId('req') });
    res.end(JSON.stringify(body));
  };

  const answerResponses = async (res: ServerResponse, raw: string) => {
    let body: Json;
    try {
      body = JSON.parse(raw) as Json;
    } catch {
      return sendJson(res, 400, { error: { type: 'invalid_request_error', message: 'not JSON' } });
    }
    bodies.push(raw);
    const kind = classify(body);
    const answer: FakeResponsesAnswer =
      kind === 'compact'
        ? (queues.compact!.shift() ?? { text: SUMMARY, usage: { estimate: true } })
        : (queues[kind]?.shift() ?? script.fallback ?? { text: 'Done.' });
    const model = typeof body.model === 'string' ? body.model : null;
    const log = (what: string) =>
      requests.push({
        method: 'POST',
        path: '/v1/responses',
        kind,
        model,
        bodyBytes: raw.length,
        toolOutputs: toolOutputsOf(body),
        answer: answer.label ? `${answer.label}: ${what}` : what,
      });
    if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
    if (answer.error) {
      log(`error ${answer.error.status}`);
      return sendJson(res, answer.error.status, {
        error: { type: 'invalid_request_error', message: answer.error.message },
      });
    }
    const usage = usageOf(answer, raw.length, kind);
    const responseId = newId('resp');
    const cut = answer.incomplete?.cutAt;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-request-id': newId('req'),
    });
    let sequence = 0;
    const event = (type: string, data: Json) =>
      res.write(
        `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`,
      );
    const response = (status: string, output: Json[], extra: Json = {}) => ({
      id: responseId,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status,
      model: model ?? 'gpt-5.5',
      output,
      ...extra,
    });
    event('response.created', { response: response('in_progress', []) });
    event('response.in_progress', { response: response('in_progress', []) });
    const output: Json[] = [];
    const items: Array<{ item: Json; stream: () => void }> = [];
    if (answer.text !== undefined || !answer.call) {
      const text = answer.text ?? 'OK.';
      const sent = cut === undefined || answer.call ? text : text.slice(0, cut);
      const id = newId('msg');
      const done = {
        type: 'message',
        id,
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: sent, annotations: [] }],
      };
      items.push({
        item: done,
        stream: () => {
          const index = output.length;
          event('response.output_item.added', {
            output_index: index,
            item: { ...done, status: 'in_progress', content: [] },
          });
          event('response.content_part.added', {
            output_index: index,
            item_id: id,
            content_index: 0,
            part: { type: 'output_text', text: '', annotations: [] },
          });
          event('response.output_text.delta', {
            output_index: index,
            item_id: id,
            content_index: 0,
            delta: sent,
          });
          if (cut !== undefined && !answer.call) return; // cut: the item never finishes
          event('response.output_text.done', {
            output_index: index,
            item_id: id,
            content_index: 0,
            text: sent,
          });
          event('response.output_item.done', { output_index: index, item: done });
          output.push(done);
        },
      });
    }
    if (answer.call) {
      const args = JSON.stringify(answer.call.arguments).split('__WORK__').join(workDir);
      const sent = cut === undefined ? args : args.slice(0, cut);
      const id = newId('fc');
      const done = {
        type: 'function_call',
        id,
        status: 'completed',
        call_id: newId('call'),
        name: answer.call.name,
        arguments: sent,
      };
      items.push({
        item: done,
        stream: () => {
          const index = output.length;
          event('response.output_item.added', {
            output_index: index,
            item: { ...done, status: 'in_progress', arguments: '' },
          });
          event('response.function_call_arguments.delta', {
            output_index: index,
            item_id: id,
            delta: sent,
          });
          if (cut !== undefined) return; // cut: the call's arguments never finish
          event('response.function_call_arguments.done', {
            output_index: index,
            item_id: id,
            arguments: sent,
          });
          event('response.output_item.done', { output_index: index, item: done });
          output.push(done);
        },
      });
    }
    for (const { stream } of items) stream();
    if (cut !== undefined) {
      log(`${items.map((i) => i.item.type).join('+')} incomplete max_output_tokens`);
      event('response.incomplete', {
        response: response('incomplete', output, {
          incomplete_details: { reason: 'max_output_tokens' },
          usage,
        }),
      });
    } else {
      log(`${items.map((i) => i.item.type).join('+')} completed`);
      event('response.completed', { response: response('completed', output, { usage }) });
    }
    res.end();
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    if (req.method === 'POST' && path === '/v1/responses') return answerResponses(res, raw);
    requests.push({
      method: req.method ?? '?',
      path,
      kind: path.startsWith('/v1/analytics/') ? 'analytics' : 'other',
      model: null,
      bodyBytes: raw.length,
      toolOutputs: {},
      answer: path.startsWith('/v1/analytics/') ? '{}' : '404',
    });
    if (req.method === 'POST' && path.startsWith('/v1/analytics/')) return sendJson(res, 200, {});
    return sendJson(res, 404, { error: { type: 'not_found', message: path } });
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      Promise.resolve(handle(req, res, Buffer.concat(chunks).toString('utf8'))).catch(
        (error: unknown) => {
          if (!res.headersSent)
            sendJson(res, 500, { error: { type: 'server_error', message: String(error) } });
          else res.end();
        },
      );
    });
  });
  return listenFake(server, listen).then(({ url, close }) => ({ url, requests, bodies, close }));
}
