/**
 * Registering the automatic reports on a provider client, once: `instrumentAnthropic(client)`
 * adds a middleware to an `@anthropic-ai/sdk` client (its public `middleware` list, read on
 * every request); `instrumentOpenAI(client)` wraps an `openai` client's `fetch`. For clients
 * you construct, `rotscopeAnthropicMiddleware` and `rotscopeFetch()` go in their options.
 * Typed structurally: neither provider SDK is a dependency of this package.
 */
import { observeExchange } from './instrument.js';

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** What an Anthropic middleware is given (`@anthropic-ai/sdk` `APIRequest`). */
export interface AnthropicMiddlewareRequest extends RequestInit {
  url: string;
}

/**
 * The Anthropic middleware (`new Anthropic({ middleware: [rotscopeAnthropicMiddleware] })`):
 * reads each Messages exchange and reports compactions and clears. Passes the request and
 * response through unchanged.
 */
export function rotscopeAnthropicMiddleware(
  request: AnthropicMiddlewareRequest,
  next: (request: AnthropicMiddlewareRequest) => Promise<Response>,
): Promise<Response> {
  return observeExchange(request.url, request.body, () => next(request));
}

const WRAPPED = Symbol.for('@rotscope/sdk.fetch');

/**
 * A `fetch` that reports the compactions and clears of the Anthropic Messages and OpenAI
 * Responses exchanges going through it (`new OpenAI({ fetch: rotscopeFetch() })`, or any
 * client with a `fetch` option). Other requests pass straight through.
 */
export function rotscopeFetch(base: Fetch = globalThis.fetch): Fetch {
  if ((base as { [WRAPPED]?: true })[WRAPPED]) return base;
  const wrapped: Fetch = (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    return observeExchange(url, init?.body, () => base(input, init));
  };
  Object.defineProperty(wrapped, WRAPPED, { value: true });
  return wrapped;
}

function fail(fn: string, message: string): never {
  throw new TypeError(`@rotscope/sdk ${fn}: ${message}`);
}

/**
 * Reports the compactions and clears of an existing `@anthropic-ai/sdk` (1.x) client's
 * Messages calls (`client.messages` and `client.beta.messages`). Idempotent; returns the client.
 */
export function instrumentAnthropic<T extends object>(client: T): T {
  const list = (client as { middleware?: unknown }).middleware;
  if (!Array.isArray(list)) {
    fail(
      'instrumentAnthropic',
      'this client has no middleware list (@anthropic-ai/sdk 1.x has one); pass rotscopeFetch() as its fetch option instead',
    );
  }
  if (!list.includes(rotscopeAnthropicMiddleware)) list.push(rotscopeAnthropicMiddleware);
  return client;
}

/**
 * Reports the compactions of an existing `openai` (6.x) client's Responses calls and
 * `responses.compact` results, by wrapping the `fetch` it sends every request with.
 * Idempotent; returns the client.
 */
export function instrumentOpenAI<T extends object>(client: T): T {
  const c = client as { fetch?: unknown };
  if (typeof c.fetch !== 'function') {
    fail(
      'instrumentOpenAI',
      'this client has no fetch function to wrap; pass rotscopeFetch() as its fetch option instead',
    );
  }
  c.fetch = rotscopeFetch(c.fetch as Fetch);
  return client;
}
