/**
 * Producer: OpenLLMetry / Traceloop, `@traceloop/instrumentation-anthropic` 0.27 on the
 * Anthropic SDK 0.x (installed under the alias `anthropic-sdk-0`, since the instrumentation
 * patches `Anthropic.Completions`, which 1.x removed), instrumented with
 * `manuallyInstrument(module)` as the Traceloop docs say for bundled/ESM apps. The SDK's own
 * spans (0.137 has them too) are switched off with `openTelemetry: false`, or every call would
 * be reported twice, once by each (a real hazard for users of both: see the README).
 * Conversation key: the Traceloop association property `session_id`.
 *
 * Observed: on streamed calls this version records usage but no finish reason
 * (`gen_ai.response.finish_reasons` absent, `finish_reason: ""` in the output messages) and
 * empty tool-call arguments, so the "finding" call 2 is not streamed.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { AnthropicInstrumentation } from '@traceloop/instrumentation-anthropic';
import * as anthropic0 from 'anthropic-sdk-0';
import { scriptFakeLlm } from '../fake-llm.ts';
import {
  MESSAGES_FINDING_REPLIES,
  MESSAGES_TOOLS_REPLIES,
  messagesFindingConversation,
  messagesToolsConversation,
} from './anthropic-messages.ts';
import { startTelemetry, type ProducerOptions } from './otel.ts';
import { AssociationPropertiesProcessor, withAssociationProperties } from './traceloop-common.ts';

export const TOOLS_SESSION = 'sess_traceloop_anthropic_tools';
export const FINDING_SESSION = 'sess_traceloop_anthropic_finding';

export async function runTraceloopAnthropic(opts: ProducerOptions): Promise<void> {
  const telemetry = startTelemetry(opts, 'traceloop-anthropic-app', 'proto', [
    new AssociationPropertiesProcessor(),
  ]);
  const instrumentation = new AnthropicInstrumentation({ traceContent: true });
  instrumentation.setTracerProvider(telemetry.tracerProvider);
  instrumentation.manuallyInstrument(
    anthropic0 as unknown as Parameters<typeof instrumentation.manuallyInstrument>[0],
  );
  try {
    const client = new anthropic0.Anthropic({
      apiKey: 'sk-ant-fake',
      baseURL: opts.llmUrl,
      maxRetries: 0,
      openTelemetry: false,
    }) as unknown as Anthropic;
    await scriptFakeLlm(opts.llmUrl, [...MESSAGES_TOOLS_REPLIES, ...MESSAGES_FINDING_REPLIES]);
    await withAssociationProperties({ session_id: TOOLS_SESSION }, () =>
      messagesToolsConversation(client),
    );
    await withAssociationProperties({ session_id: FINDING_SESSION }, () =>
      messagesFindingConversation(client, undefined, false),
    );
  } finally {
    instrumentation.disable();
    await telemetry.shutdown();
  }
}
