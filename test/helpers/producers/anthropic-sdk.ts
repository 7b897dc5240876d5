/**
 * Producer: the Anthropic TypeScript SDK's own spans (`@anthropic-ai/sdk` 1.x). The SDK
 * starts a `CLIENT` span per API call (`anthropic.messages.create`) through the tracer
 * provider registered with the OpenTelemetry API, as soon as one is registered (read in
 * node_modules/@anthropic-ai/sdk/internal/tracing.mjs: `getTracer` takes
 * `trace.getTracerProvider()` unless the `openTelemetry` client option gives one, and traces
 * are on unless `openTelemetry: false` or `ANTHROPIC_OPEN_TELEMETRY=false`). Content goes on
 * the span only with `traces.contentMode: 'content'` (or
 * `ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content`), which this application turns on.
 * The conversation key is the per-request option `openTelemetry: { conversationId }`, which
 * the SDK writes as `gen_ai.conversation.id`.
 */
import Anthropic from '@anthropic-ai/sdk';
import { scriptFakeLlm } from '../fake-llm.ts';
import {
  MESSAGES_FINDING_REPLIES,
  MESSAGES_TOOLS_REPLIES,
  messagesFindingConversation,
  messagesToolsConversation,
} from './anthropic-messages.ts';
import { startTelemetry, type ProducerOptions } from './otel.ts';

export const TOOLS_CONVERSATION = 'conv_anthropic_sdk_tools';
export const FINDING_CONVERSATION = 'conv_anthropic_sdk_finding';

export async function runAnthropicSdk(opts: ProducerOptions): Promise<void> {
  const telemetry = startTelemetry(opts, 'anthropic-sdk-app');
  try {
    const client = new Anthropic({
      apiKey: 'sk-ant-fake',
      baseURL: opts.llmUrl,
      maxRetries: 0,
      openTelemetry: { traces: { contentMode: 'content' } },
    });
    await scriptFakeLlm(opts.llmUrl, [...MESSAGES_TOOLS_REPLIES, ...MESSAGES_FINDING_REPLIES]);
    await messagesToolsConversation(client, {
      openTelemetry: { conversationId: TOOLS_CONVERSATION },
    });
    await messagesFindingConversation(client, {
      openTelemetry: { conversationId: FINDING_CONVERSATION },
    });
  } finally {
    await telemetry.shutdown();
  }
}
