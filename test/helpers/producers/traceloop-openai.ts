/**
 * Producer: OpenLLMetry / Traceloop, `@traceloop/instrumentation-openai` 0.27 on the `openai`
 * SDK 6.x (prompt content on, token enrichment off), registered and then `require('openai')`d
 * as a CommonJS application does. The conversation key is the Traceloop association property
 * `session_id` (see traceloop-common.ts). Conversations "tools" and "finding" of
 * openai-chat.ts. Observed: this instrumentation ignores the usage chunk of a streamed chat
 * completion (it only estimates tokens with `enrichTokens`), so streamed calls 2 and 3 of
 * "tools" carry no usage; the "finding" call 2 is therefore not streamed. Each call is its
 * own trace (no application span: Traceloop apps usually wrap
 * calls in `@workflow`s; without the SDK each call is a root span, joined only by session).
 */
import { createRequire } from 'node:module';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { OpenAIInstrumentation } from '@traceloop/instrumentation-openai';
import type OpenAINs from 'openai';
import { scriptFakeLlm } from '../fake-llm.ts';
import {
  CHAT_FINDING_REPLIES,
  CHAT_TOOLS_REPLIES,
  chatFindingConversation,
  chatToolsConversation,
} from './openai-chat.ts';
import { startTelemetry, type ProducerOptions } from './otel.ts';
import { AssociationPropertiesProcessor, withAssociationProperties } from './traceloop-common.ts';

export const TOOLS_SESSION = 'sess_traceloop_openai_tools';
export const FINDING_SESSION = 'sess_traceloop_openai_finding';

const require = createRequire(import.meta.url);

export async function runTraceloopOpenai(opts: ProducerOptions): Promise<void> {
  const telemetry = startTelemetry(opts, 'traceloop-openai-app', 'proto', [
    new AssociationPropertiesProcessor(),
  ]);
  const instrumentation = new OpenAIInstrumentation({ traceContent: true, enrichTokens: false });
  const unregister = registerInstrumentations({ instrumentations: [instrumentation] });
  try {
    const { OpenAI } = require('openai') as typeof import('openai');
    const client: OpenAINs = new OpenAI({
      apiKey: 'sk-fake',
      baseURL: `${opts.llmUrl}/v1`,
      maxRetries: 0,
    });
    await scriptFakeLlm(opts.llmUrl, [...CHAT_TOOLS_REPLIES, ...CHAT_FINDING_REPLIES]);
    await withAssociationProperties({ session_id: TOOLS_SESSION }, () =>
      chatToolsConversation(client),
    );
    await withAssociationProperties({ session_id: FINDING_SESSION }, () =>
      chatFindingConversation(client, false),
    );
  } finally {
    unregister();
    instrumentation.disable();
    await telemetry.shutdown();
  }
}
