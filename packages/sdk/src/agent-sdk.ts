/**
 * The Claude Agent SDK's own window (issue 34 §1 of rotscope): the `result` message that ends each
 * `query()` turn carries `modelUsage[model].contextWindow`, the window the bundled Claude Code
 * judged its context against. rotscope gets the calls from Claude Code's telemetry but not that
 * number; this reports it as one `rotscope.window` span per model (`gen_ai.conversation.id` and
 * `session.id` = the session, `rotscope.window.model`, `rotscope.window.tokens`,
 * `rotscope.window.reporter` = `claude-agent-sdk`), which rotscope stores as the window of the
 * session's calls of that model (source `agent`; a workspace override still wins).
 *
 * Structural: the Agent SDK is not a dependency; any object shaped like its `SDKResultMessage`
 * (`{ type: 'result', session_id, modelUsage: { [model]: { contextWindow } } }`) is read, every
 * other message is ignored.
 */
import { trace, type Attributes } from '@opentelemetry/api';
import {
  ATTR_CONVERSATION_ID,
  ATTR_SESSION_ID,
  ATTR_WINDOW_MODEL,
  ATTR_WINDOW_REPORTER,
  ATTR_WINDOW_TOKENS,
  WINDOW_SPAN_NAME,
} from './attributes.js';
import { TRACER_NAME, TRACER_VERSION } from './version.js';

/** `rotscope.window.reporter` of the windows this module reports. */
export const AGENT_SDK_REPORTER = 'claude-agent-sdk';

/** What this module reads of the Agent SDK's `SDKResultMessage` (its `ModelUsage` per model). */
export interface AgentResultMessage {
  type: 'result';
  session_id: string;
  modelUsage?: Record<string, { contextWindow?: number } | undefined>;
}

/** Reports already made in this process, `session \0 model \0 window` (oldest first). */
const reported = new Set<string>();
/** Beyond this many, the oldest are forgotten (a long-lived server runs many sessions). */
const REPORTED_MAX = 10_000;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null;

/**
 * Reports the windows of one Agent SDK message: for a `result` message, one `rotscope.window`
 * span per model of `modelUsage` with a `contextWindow` (a positive integer), through the global
 * OpenTelemetry tracer; any other message (or value) is ignored. The same session, model and
 * window is reported once per process (once a tracer provider records it: before one is
 * registered, nothing is sent and a later result reports it). Returns how many windows it
 * reported. Never throws on the message's shape.
 */
export function reportAgentResult(message: unknown): number {
  if (!isObj(message) || message['type'] !== 'result') return 0;
  const session = message['session_id'];
  const usage = message['modelUsage'];
  if (typeof session !== 'string' || session === '' || !isObj(usage)) return 0;
  let count = 0;
  for (const [model, perModel] of Object.entries(usage)) {
    const window = isObj(perModel) ? perModel['contextWindow'] : undefined;
    if (model === '' || typeof window !== 'number' || !Number.isInteger(window) || window <= 0)
      continue;
    const key = `${session}\0${model}\0${window}`;
    if (reported.has(key)) continue;
    const attributes: Attributes = {
      [ATTR_CONVERSATION_ID]: session,
      [ATTR_SESSION_ID]: session,
      [ATTR_WINDOW_MODEL]: model,
      [ATTR_WINDOW_TOKENS]: window,
      [ATTR_WINDOW_REPORTER]: AGENT_SDK_REPORTER,
    };
    const span = trace.getTracer(TRACER_NAME, TRACER_VERSION).startSpan(WINDOW_SPAN_NAME, {
      attributes,
    });
    const recording = span.isRecording();
    span.end();
    // no tracer provider registered yet (or a sampler dropped it): not sent, so tried again
    if (!recording) continue;
    reported.add(key);
    if (reported.size > REPORTED_MAX) reported.delete(reported.values().next().value as string);
    count++;
  }
  return count;
}

/** Reports a message's windows without ever disturbing the application's message stream. */
function observe(message: unknown): void {
  try {
    reportAgentResult(message);
  } catch {
    // a failing tracer must not break the agent: the window is only lost
  }
}

type Next = (...args: [] | [unknown]) => Promise<IteratorResult<unknown>>;

function observedNext(next: Next): Next {
  return async (...args) => {
    const result = await next(...args);
    if (isObj(result) && result['done'] !== true) observe(result['value']);
    return result;
  };
}

/** An iterator that reports what `inner` yields; `return` and `throw` go to `inner`. */
function observedIterator(inner: AsyncIterator<unknown>): AsyncIterableIterator<unknown> {
  const it: AsyncIterableIterator<unknown> = {
    next: observedNext(inner.next.bind(inner)),
    [Symbol.asyncIterator]: () => it,
  };
  if (inner.return) it.return = inner.return.bind(inner);
  if (inner.throw) it.throw = inner.throw.bind(inner);
  return it;
}

/**
 * Observes the messages of a Claude Agent SDK `query()` (or any async iterable of its
 * messages): returns an object that behaves as `messages` does (the same messages, unchanged
 * and in order, the same `return()`; a `Query`'s own methods such as `interrupt()` still work on
 * it) and, as each `result` message passes, reports its windows with {@link reportAgentResult}.
 * A failure to report never reaches the stream.
 *
 * ```ts
 * for await (const message of observeAgentMessages(query({ prompt, options }))) { ... }
 * ```
 */
export function observeAgentMessages<I extends AsyncIterable<unknown>>(messages: I): I {
  const iterable = messages as unknown as { [Symbol.asyncIterator]?: unknown } | null;
  if (!isObj(iterable) || typeof iterable[Symbol.asyncIterator] !== 'function') {
    throw new TypeError(
      '@rotscope/sdk observeAgentMessages: the argument must be an async iterable',
    );
  }
  const proxy: I = new Proxy(messages, {
    get(target, prop) {
      if (prop === Symbol.asyncIterator) {
        return () => {
          const inner = target[Symbol.asyncIterator]();
          // an async generator (the Agent SDK's Query) is its own iterator: so is the proxy
          return inner === (target as unknown) ? proxy : observedIterator(inner);
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      const bound = (value as (...a: unknown[]) => unknown).bind(target);
      return prop === 'next' ? observedNext(bound as Next) : bound;
    },
  });
  return proxy;
}
