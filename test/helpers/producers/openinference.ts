/**
 * Producer: OpenInference, `@arizeai/openinference-instrumentation-openai` 4.2 on the `openai`
 * SDK 6.x. Instrumented with `manuallyInstrument(OpenAI)` on the `OpenAI` class of the ES
 * module the application imports (Arize's documented way for ESM; it patches the class's
 * `Chat.Completions` / `Responses` prototypes, which @openai/agents then uses too, see
 * openinference-agents.ts). Conversation key: OpenInference `session.id`, set with
 * `setSession` from `@arizeai/openinference-core` around each conversation. Conversations
 * "tools" and "finding" of openai-chat.ts. Observed: streamed chat completions get no
 * `llm.token_count.*` (the usage chunk is ignored), so the "finding" call 2 is not streamed.
 */
import { context } from '@opentelemetry/api';
import { setSession } from '@arizeai/openinference-core';
import { OpenAIInstrumentation } from '@arizeai/openinference-instrumentation-openai';
import * as openaiModule from 'openai';
import { scriptFakeLlm } from '../fake-llm.ts';
import {
  CHAT_FINDING_REPLIES,
  CHAT_TOOLS_REPLIES,
  chatFindingConversation,
  chatToolsConversation,
} from './openai-chat.ts';
import { startTelemetry, type ProducerOptions } from './otel.ts';

export const TOOLS_SESSION = 'sess_openinference_tools';
export const FINDING_SESSION = 'sess_openinference_finding';

export function withSession<T>(sessionId: string, fn: () => T): T {
  return context.with(setSession(context.active(), { sessionId }), fn);
}

export async function runOpenInference(opts: ProducerOptions): Promise<void> {
  const telemetry = startTelemetry(opts, 'openinference-app');
  const instrumentation = new OpenAIInstrumentation({ tracerProvider: telemetry.tracerProvider });
  instrumentation.manuallyInstrument(openaiModule.OpenAI);
  try {
    const client = new openaiModule.OpenAI({
      apiKey: 'sk-fake',
      baseURL: `${opts.llmUrl}/v1`,
      maxRetries: 0,
    });
    await scriptFakeLlm(opts.llmUrl, [...CHAT_TOOLS_REPLIES, ...CHAT_FINDING_REPLIES]);
    await withSession(TOOLS_SESSION, () => chatToolsConversation(client));
    await withSession(FINDING_SESSION, () => chatFindingConversation(client, false));
  } finally {
    instrumentation.disable();
    await telemetry.shutdown();
  }
}
