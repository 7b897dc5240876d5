/**
 * What `@traceloop/node-server-sdk` adds around its instrumentations, reduced to the part a
 * conversation key needs: `withAssociationProperties({ session_id })` puts the properties in
 * the context, and the SDK's span processor copies them onto every span started there as
 * `traceloop.association.properties.<key>`. The full SDK is not installed (it pulls every
 * Traceloop instrumentation and a cloud exporter); this processor does the same copy.
 */
import { context, createContextKey, type Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-node';

const ASSOCIATION_PROPERTIES_KEY = createContextKey('association_properties');

export function withAssociationProperties<T>(properties: Record<string, string>, fn: () => T): T {
  return context.with(context.active().setValue(ASSOCIATION_PROPERTIES_KEY, properties), fn);
}

export class AssociationPropertiesProcessor implements SpanProcessor {
  onStart(span: Span, parentContext: Context): void {
    const props = parentContext.getValue(ASSOCIATION_PROPERTIES_KEY) as
      Record<string, string> | undefined;
    for (const [key, value] of Object.entries(props ?? {})) {
      span.setAttribute(`traceloop.association.properties.${key}`, value);
    }
  }
  onEnd(_span: ReadableSpan): void {}
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
