/**
 * Automatic reports, registered once per client: every Anthropic Messages and OpenAI Responses
 * exchange is read at the HTTP boundary of the provider SDK (Anthropic's public `middleware`,
 * OpenAI's `fetch` option), after the response arrives and before the SDK parses it, while
 * the LLM span of whatever instrumentation the application uses is still open and active.
 * What the provider says about compaction and clearing goes on that span; when no
 * instrumentation made one, on a GenAI span this module makes for the call. See README.md.
 */
import { context, trace, SpanStatusCode, type Attributes, type Span } from '@opentelemetry/api';
import { ATTR_CONVERSATION_ID, ATTR_OPERATION_NAME } from './attributes.js';
import { readableAttributes } from './compaction.js';
import { markPending, markReported, takeFor, takePendingFor } from './compaction-registry.js';
import { isLlmSpan } from './llm-span.js';
import {
  clearEventAttributes,
  compactionEventAttributes,
  reportOnSpan,
  ATTR_COMPACTION_SOURCE,
} from './provider-reports.js';
import {
  readRequest,
  readResponse,
  type Provider,
  type RequestFacts,
  type ResponseFacts,
} from './provider-shapes.js';
import { TRACER_NAME, TRACER_VERSION } from './version.js';

/** Which exchange a URL is: an LLM call, the OpenAI compact endpoint, or none we read. */
function endpointOf(url: string): { provider: Provider; call: boolean } | null {
  let path: string;
  try {
    path = new URL(url).pathname.replace(/\/+$/, '');
  } catch {
    return null;
  }
  if (path.endsWith('/messages')) return { provider: 'anthropic', call: true };
  if (path.endsWith('/responses')) return { provider: 'openai', call: true };
  if (path.endsWith('/responses/compact')) return { provider: 'openai', call: false };
  return null;
}

function parseJson(body: unknown): unknown {
  if (typeof body !== 'string') return null;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return null;
  }
}

/** The active span when it is an LLM span still recording (any producer's, see llm-span.ts). */
function activeLlmSpan(): Span | null {
  const span = trace.getActiveSpan();
  if (span === undefined || !span.isRecording()) return null;
  const attrs = readableAttributes(span);
  const name = (span as { name?: unknown }).name;
  if (attrs === undefined || typeof name !== 'string') return null;
  return isLlmSpan(name, attrs) ? span : null;
}

/** The GenAI span made for a call no instrumentation traced (semconv names). */
function startOwnSpan(provider: Provider, req: RequestFacts): Span {
  const attributes: Attributes = {
    [ATTR_OPERATION_NAME]: 'chat',
    'gen_ai.provider.name': provider,
  };
  if (req.model !== null) attributes['gen_ai.request.model'] = req.model;
  const outer = readableAttributes(trace.getActiveSpan())?.[ATTR_CONVERSATION_ID];
  const conversation = req.conversationId ?? (typeof outer === 'string' ? outer : null);
  if (conversation !== null) attributes[ATTR_CONVERSATION_ID] = conversation;
  const tracer = trace.getTracer(TRACER_NAME, TRACER_VERSION);
  return tracer.startSpan(req.model === null ? 'chat' : `chat ${req.model}`, { attributes });
}

function recordOwnResponse(
  span: Span,
  res: Response,
  facts: (ResponseFacts & { provider: Provider }) | null,
): void {
  if (!res.ok) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${res.status}` });
    span.setAttribute('error.type', String(res.status));
  }
  if (facts === null) return;
  const set = (k: string, v: string | number | string[] | null) => {
    if (v !== null) span.setAttribute(k, v);
  };
  set('gen_ai.response.id', facts.id);
  set('gen_ai.response.model', facts.model);
  if (facts.finishReasons.length > 0) set('gen_ai.response.finish_reasons', facts.finishReasons);
  // semconv ≥ 1.40: input_tokens includes the cached tokens
  if (facts.inputTokens !== null) {
    set(
      'gen_ai.usage.input_tokens',
      facts.provider === 'anthropic'
        ? facts.inputTokens + (facts.cacheReadTokens ?? 0) + (facts.cacheWriteTokens ?? 0)
        : facts.inputTokens,
    );
  }
  set('gen_ai.usage.output_tokens', facts.outputTokens);
  if (facts.cacheReadTokens) set('gen_ai.usage.cache_read.input_tokens', facts.cacheReadTokens);
  if (facts.cacheWriteTokens)
    set('gen_ai.usage.cache_creation.input_tokens', facts.cacheWriteTokens);
}

/** Request side: the first call sending back (or continuing) a compaction not reported yet. */
function reportReplayed(span: Span | null, req: RequestFacts): void {
  for (const r of req.replayed) {
    const found = takeFor(r.key);
    if (found === null) continue;
    const attrs =
      found === 'unseen'
        ? compactionEventAttributes({
            source: `${r.source}.replayed`,
            keys: [],
            summary: r.summary,
            tokensBefore: null,
            tokensAfter: null,
            messagesKept: null,
            alsoNextCall: false,
          })
        : found;
    if (span !== null) reportOnSpan(span, attrs, true);
    return;
  }
  for (const key of req.continues) {
    const found = takePendingFor(key);
    if (found === null) continue;
    if (span !== null)
      reportOnSpan(
        span,
        {
          ...found,
          [ATTR_COMPACTION_SOURCE]: `${String(found[ATTR_COMPACTION_SOURCE])}.continued`,
        },
        true,
      );
    return;
  }
}

/** Response side: compactions and clears of this call, and what the next call must report. */
function reportResponse(span: Span | null, facts: ResponseFacts): void {
  for (const c of facts.compactions) {
    const attrs = compactionEventAttributes(c);
    if (facts.isCall && span !== null) reportOnSpan(span, attrs, true);
    if (c.alsoNextCall || !facts.isCall) {
      markPending([...c.keys, ...facts.continuedBy], attrs);
    } else {
      markReported(c.keys);
    }
  }
  if (span === null) return;
  for (const c of facts.clears)
    reportOnSpan(span, clearEventAttributes(c, facts.contextTokens), false);
}

async function readJson(res: Response): Promise<unknown> {
  const type = res.headers.get('content-type') ?? '';
  if (!res.ok || !type.includes('json')) return null;
  try {
    return (await res.clone().json()) as unknown;
  } catch {
    return null;
  }
}

/**
 * One HTTP exchange with a provider: reads the request, sends it (inside our own span when no
 * instrumentation made an LLM span), reads the response from a clone. Tracing problems never
 * reach the application: only `send`'s own errors do.
 */
export async function observeExchange(
  url: string,
  body: unknown,
  send: () => Promise<Response>,
): Promise<Response> {
  const endpoint = endpointOf(url);
  if (endpoint === null) return send();
  let req: RequestFacts;
  let span: Span | null = null;
  let own: Span | null = null;
  try {
    req = readRequest(endpoint.provider, parseJson(body));
    if (endpoint.call) {
      span = activeLlmSpan();
      if (span === null) own = span = startOwnSpan(endpoint.provider, req);
      reportReplayed(span, req);
    }
  } catch {
    return send();
  }
  let res: Response;
  try {
    res = await (own === null ? send() : context.with(trace.setSpan(context.active(), own), send));
  } catch (error) {
    own?.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
    own?.end();
    throw error;
  }
  try {
    const facts = req.stream
      ? null
      : { ...readResponse(endpoint.provider, await readJson(res)), provider: endpoint.provider };
    if (own !== null) recordOwnResponse(own, res, facts);
    if (facts !== null) reportResponse(span, facts);
  } catch {
    // tracing must never break the application
  } finally {
    own?.end();
  }
  return res;
}
