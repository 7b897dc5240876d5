/**
 * A scripted fake of the Gemini API (generativelanguage `v1beta`), for driving the real Gemini
 * CLI offline (test/e2e/gemini-real). It answers what the CLI sends through `@google/genai`
 * with `GOOGLE_GEMINI_BASE_URL` pointing here: `POST /v1beta/models/M:streamGenerateContent?alt=sse`
 * (server-sent events, one JSON chunk per event), `POST /v1beta/models/M:generateContent` and
 * `POST /v1beta/models/M:countTokens`. Each request is classed, in this order, as a request of
 * the history compressor (its system instruction asks for a `<state_snapshot>`; it sends two, a
 * summary and a verification), the main thread (a request that offers function declarations),
 * or an auxiliary request (no tools: routing, next-speaker checks, ...), and answered with the
 * next scripted answer of that queue. It listens on a Unix socket or on 127.0.0.1 only.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bodyServer, listenFake, type FakeListen } from './fake-listen.ts';

/**
 * Token usage of one answer: fixed numbers, or `estimate` (request bytes / 4). `prompt` is the
 * `promptTokenCount` (Gemini counts the whole input there; `cached` is a part of it).
 */
export type GeminiUsage =
  | { prompt: number; output?: number; cached?: number; thoughts?: number }
  | { estimate: true; output?: number };

/** One scripted answer. */
export interface GeminiAnswer {
  /** Shown in the request log. */
  label?: string;
  text?: string;
  /** Split the text over this many stream chunks (default 1); the last carries the finish reason. */
  chunks?: number;
  /** A function call (in the last chunk); `__WORK__` in its args becomes the work dir. */
  functionCall?: { name: string; args: Record<string, unknown> };
  /** Gemini's `finishReason` of the last chunk. Default `STOP`. */
  finishReason?: string;
  usage?: GeminiUsage;
  /** Answer with this HTTP error instead. */
  error?: { status: number; message: string; reason?: string };
}

/** What the fake answers, per queue. */
export interface GeminiScript {
  main: GeminiAnswer[];
  /** The compressor's requests (summary, then verification); default a short `<state_snapshot>`. */
  compress?: GeminiAnswer[];
  /** Requests without tools that are not the compressor's; default a short JSON-ish text. */
  aux?: GeminiAnswer[];
  /** When the main queue is empty. Default: a short final text. */
  fallback?: GeminiAnswer;
  /** `countTokens` answers: a fixed count, else request bytes / 4. */
  countTokens?: number;
}

/** One request as the fake saw it. */
export interface GeminiRequest {
  method: string;
  path: string;
  kind: string;
  model: string | null;
  stream: boolean;
  bodyBytes: number;
  answer: string;
}

export interface FakeGemini {
  /** `http://127.0.0.1:PORT` when listening on TCP, else null. */
  url: string | null;
  requests: GeminiRequest[];
  /** The parsed bodies of the main-thread requests, in order (for debugging scenarios). */
  bodies: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

const SNAPSHOT =
  '<state_snapshot>\n<overall_goal>Inspect the project and report.</overall_goal>\n' +
  '<key_knowledge>Files were read; tools ran.</key_knowledge>\n' +
  '<current_plan>1. [DONE] read files 2. [TODO] report</current_plan>\n</state_snapshot>';

type Json = Record<string, unknown>;

function textOfParts(parts: unknown): string {
  if (!Array.isArray(parts)) return '';
  return parts
    .map((p: Json) => (typeof p?.text === 'string' ? p.text : ''))
    .filter((t) => t !== '')
    .join('\n');
}

function systemText(body: Json): string {
  const si = (body.systemInstruction ?? body.system_instruction) as Json | string | undefined;
  if (typeof si === 'string') return si;
  if (si && typeof si === 'object') return textOfParts(si.parts) || String(si.text ?? '');
  return '';
}

function lastUserText(body: Json): string {
  const contents = (body.contents ?? []) as Json[];
  for (let i = contents.length - 1; i >= 0; i--) {
    if (contents[i]!.role === 'user') return textOfParts(contents[i]!.parts);
  }
  return '';
}

/** A request of Gemini CLI's history compressor (ChatCompressionService). */
function isCompression(body: Json): boolean {
  return /state_snapshot/.test(systemText(body)) || /<state_snapshot>/.test(lastUserText(body));
}

function hasTools(body: Json): boolean {
  const tools = body.tools;
  return (
    Array.isArray(tools) &&
    tools.some(
      (t: Json) => Array.isArray(t?.functionDeclarations) && t.functionDeclarations.length > 0,
    )
  );
}

/** `text` cut into `n` pieces of about equal length (at least one). */
function split(text: string, n: number): string[] {
  const count = Math.max(1, Math.min(n, text.length));
  const size = Math.ceil(text.length / count);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length === 0 ? [''] : out;
}

export function startFakeGemini(
  script: GeminiScript,
  listen: FakeListen,
  workDir: string,
): Promise<FakeGemini> {
  const queues: Record<string, GeminiAnswer[]> = {
    main: [...script.main],
    compress: [...(script.compress ?? [])],
    aux: [...(script.aux ?? [])],
  };
  const requests: GeminiRequest[] = [];
  const bodies: Json[] = [];
  let ids = 0;
  const newId = (prefix: string) => `${prefix}${(++ids).toString(36).padStart(8, '0')}`;

  const sendJson = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify(body));
  };

  const usageOf = (answer: GeminiAnswer, bytes: number, outputSoFar?: number) => {
    const u = answer.usage ?? { estimate: true };
    const prompt = 'estimate' in u ? Math.max(1, Math.ceil(bytes / 4)) : u.prompt;
    const output = outputSoFar ?? u.output ?? 20;
    const thoughts = 'estimate' in u ? 0 : (u.thoughts ?? 0);
    return {
      promptTokenCount: prompt,
      candidatesTokenCount: output,
      totalTokenCount: prompt + output + thoughts,
      ...('estimate' in u || u.cached === undefined ? {} : { cachedContentTokenCount: u.cached }),
      ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
    };
  };

  /** The response chunks of one answer (one chunk for `generateContent`). */
  const chunksOf = (
    answer: GeminiAnswer,
    model: string,
    bytes: number,
    stream: boolean,
  ): Json[] => {
    const responseId = newId('resp');
    const texts =
      answer.text === undefined ? [] : split(answer.text, stream ? (answer.chunks ?? 1) : 1);
    const fc = answer.functionCall
      ? {
          functionCall: {
            name: answer.functionCall.name,
            args: JSON.parse(
              JSON.stringify(answer.functionCall.args).split('__WORK__').join(workDir),
            ) as Json,
          },
        }
      : null;
    const pieces: Json[][] = texts.map((t) => [{ text: t }]);
    if (fc) {
      if (pieces.length === 0) pieces.push([fc]);
      else pieces[pieces.length - 1]!.push(fc);
    }
    if (pieces.length === 0) pieces.push([{ text: 'OK.' }]);
    const total =
      'estimate' in (answer.usage ?? { estimate: true })
        ? 20
        : ((answer.usage as { output?: number }).output ?? 20);
    return pieces.map((parts, i) => {
      const last = i === pieces.length - 1;
      return {
        candidates: [
          {
            content: { parts, role: 'model' },
            ...(last ? { finishReason: answer.finishReason ?? 'STOP' } : {}),
            index: 0,
          },
        ],
        usageMetadata: usageOf(
          answer,
          bytes,
          last ? total : Math.max(1, Math.floor((total * (i + 1)) / pieces.length)),
        ),
        modelVersion: model,
        responseId,
      };
    });
  };

  const answerGenerate = (
    res: ServerResponse,
    path: string,
    model: string,
    raw: string,
    stream: boolean,
  ) => {
    let body: Json;
    try {
      body = JSON.parse(raw) as Json;
    } catch {
      return sendJson(res, 400, {
        error: { code: 400, message: 'body is not JSON', status: 'INVALID_ARGUMENT' },
      });
    }
    const kind = isCompression(body) ? 'compress' : hasTools(body) ? 'main' : 'aux';
    if (kind === 'main') bodies.push(body);
    const answer: GeminiAnswer =
      kind === 'compress'
        ? (queues.compress!.shift() ?? { text: SNAPSHOT })
        : kind === 'aux'
          ? (queues.aux!.shift() ?? { text: '{"reasoning": "simple", "model_choice": "flash"}' })
          : (queues.main!.shift() ?? script.fallback ?? { text: 'Done.' });
    const log = (what: string) =>
      requests.push({
        method: 'POST',
        path,
        kind,
        model,
        stream,
        bodyBytes: raw.length,
        answer: answer.label ? `${answer.label}: ${what}` : what,
      });
    if (answer.error) {
      log(`error ${answer.error.status}`);
      return sendJson(res, answer.error.status, {
        error: {
          code: answer.error.status,
          message: answer.error.message,
          status:
            answer.error.reason ?? (answer.error.status === 400 ? 'INVALID_ARGUMENT' : 'INTERNAL'),
        },
      });
    }
    const chunks = chunksOf(answer, model, raw.length, stream);
    log(
      `${chunks.length} chunk(s) ${answer.functionCall ? `functionCall ${answer.functionCall.name} ` : ''}${answer.finishReason ?? 'STOP'}`,
    );
    if (!stream) return sendJson(res, 200, chunks[0]);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\r\n\r\n`);
    res.end();
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const m =
      /^\/v1(?:beta|alpha)?\/models\/([^:]+):(streamGenerateContent|generateContent|countTokens)$/.exec(
        url.pathname,
      );
    if (req.method === 'POST' && m) {
      const model = decodeURIComponent(m[1]!);
      if (m[2] === 'countTokens') {
        requests.push({
          method: 'POST',
          path: url.pathname,
          kind: 'count_tokens',
          model,
          stream: false,
          bodyBytes: raw.length,
          answer: 'count',
        });
        return sendJson(res, 200, {
          totalTokens: script.countTokens ?? Math.max(1, Math.ceil(raw.length / 4)),
        });
      }
      return answerGenerate(res, url.pathname, model, raw, m[2] === 'streamGenerateContent');
    }
    requests.push({
      method: req.method ?? '?',
      path: url.pathname,
      kind: 'other',
      model: null,
      stream: false,
      bodyBytes: raw.length,
      answer: 'not found',
    });
    return sendJson(res, 404, { error: { code: 404, message: url.pathname, status: 'NOT_FOUND' } });
  };

  const server = bodyServer(handle, (res, error) => {
    sendJson(res, 500, { error: { code: 500, message: String(error), status: 'INTERNAL' } });
  });
  return listenFake(server, listen).then(({ url, close }) => ({ url, requests, bodies, close }));
}
