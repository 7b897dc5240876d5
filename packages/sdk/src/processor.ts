/**
 * The span processor to register once with the tracer provider. It adds to the spans other
 * instrumentations make, never replaces them: the next LLM span after a `markCompaction` in the
 * same async context gets `gen_ai.conversation.compacted=true`, and the sizes given to
 * `recordContextSizes` go on the next LLM span as `rotscope.input.sizes`.
 *
 * Typed structurally so this package needs no OpenTelemetry SDK dependency: it fits the
 * `SpanProcessor` interface of `@opentelemetry/sdk-trace-base` 1.x and 2.x.
 */
import type { Attributes, AttributeValue, Context } from '@opentelemetry/api';
import { ATTR_CONVERSATION_COMPACTED, ATTR_INPUT_SIZES } from './attributes.js';
import { takePendingSizes } from './context-sizes.js';
import { isLlmSpan } from './llm-span.js';
import { takePendingMark } from './pending.js';

/** What the processor needs of a starting span (the SDK's `Span` has all of it). */
export interface StartingSpan {
  readonly name: string;
  readonly attributes: Attributes;
  setAttribute(key: string, value: AttributeValue): unknown;
}

export class RotscopeSpanProcessor {
  /** Never throws: a span it cannot read is left as it is. */
  onStart(span: StartingSpan, _parentContext: Context): void {
    try {
      if (!isLlmSpan(String(span.name), span.attributes ?? {})) return;
      if (takePendingMark()) span.setAttribute(ATTR_CONVERSATION_COMPACTED, true);
      const sizes = takePendingSizes();
      if (sizes !== null) span.setAttribute(ATTR_INPUT_SIZES, sizes);
    } catch {
      // tracing must never break the application
    }
  }

  onEnd(_span: unknown): void {}

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
