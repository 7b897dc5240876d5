/**
 * Is a span that is just starting an LLM call? Decided from what producers put on a span at its
 * start (rotscope's role rules, conventions §9.1): the semconv operation name, the OpenInference
 * span kind, Traceloop's request type, the Vercel AI SDK's provider-call span names, Claude
 * Code's request span. Aggregate spans (Vercel `ai.generateText`, `invoke_agent`) are not calls.
 */
import type { Attributes } from '@opentelemetry/api';

const LLM_OPERATIONS = new Set(['chat', 'text_completion', 'generate_content', 'llm_request']);
const LLM_SPAN_NAMES = new Set([
  'claude_code.llm_request',
  'ai.generateText.doGenerate',
  'ai.streamText.doStream',
  'ai.generateObject.doGenerate',
  'ai.streamObject.doStream',
]);

/** True when the span's name or start attributes say it is one call to a model. */
export function isLlmSpan(name: string, attrs: Attributes): boolean {
  const op = attrs['gen_ai.operation.name'];
  if (typeof op === 'string') return LLM_OPERATIONS.has(op);
  const kind = attrs['openinference.span.kind'];
  if (typeof kind === 'string') return kind.toUpperCase() === 'LLM';
  const requestType = attrs['llm.request.type'];
  if (typeof requestType === 'string')
    return requestType === 'chat' || requestType === 'completion';
  return LLM_SPAN_NAMES.has(name);
}
