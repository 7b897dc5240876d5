/**
 * Producer: OpenTelemetry GenAI semantic conventions, through the official
 * `@opentelemetry/instrumentation-openai` (0.21) on the `openai` SDK 6.x, with message content
 * capture on (content then goes out as OTLP log records correlated by trace/span id).
 *
 * Set up as a CommonJS application does: register the instrumentation, then `require('openai')`
 * (the require hook patches the client). Three conversations:
 * - "tools" over chat completions (call 1 plain, calls 2 and 3 streamed with
 *   `stream_options.include_usage`), inside one application span, so the conversation key is
 *   the trace (this instrumentation sets no conversation id on chat completions);
 * - "finding" over chat completions in another application span: call 1 at 50% of gpt-4o's
 *   window, call 2 (streamed) at 80% stopping with `length`;
 * - "responses" over the Responses API with `conversation: RESPONSES_CONVERSATION`, which the
 *   instrumentation reports as `gen_ai.conversation.id` (call 1 plain, call 2 streamed); each
 *   Responses call is its own trace here, so only the conversation id joins them.
 */
import { createRequire } from 'node:module';
import { trace } from '@opentelemetry/api';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { OpenAIInstrumentation } from '@opentelemetry/instrumentation-openai';
import type OpenAINs from 'openai';
import { scriptFakeLlm, type ScriptedReply } from '../fake-llm.ts';
import {
  CHAT_FINDING_REPLIES,
  CHAT_TOOLS_REPLIES,
  chatFindingConversation,
  chatToolsConversation,
} from './openai-chat.ts';
import { startTelemetry, type ProducerOptions } from './otel.ts';
import {
  FINAL_ANSWER,
  OPENAI_MODEL,
  READ_FILE_ARGS,
  READ_FILE_RESULT,
  SYSTEM_PROMPT,
  TOOL_DEFS,
  USER_QUESTION,
} from './script.ts';

export const RESPONSES_CONVERSATION = 'conv_otel_genai_responses';
export const RESPONSES_REPLIES: [ScriptedReply, ScriptedReply] = [
  {
    expect: 'responses',
    toolCalls: [{ id: 'call_read_2', name: 'read_file', input: READ_FILE_ARGS }],
    usage: { fresh: 300, output: 25 },
  },
  { expect: 'responses', text: FINAL_ANSWER, usage: { fresh: 260, cacheRead: 3072, output: 60 } },
];

export interface OtelGenaiRun {
  /** Trace ids of the "tools" and "finding" conversations (their synthetic conversation keys). */
  toolsTraceId: string;
  findingTraceId: string;
}

const require = createRequire(import.meta.url);

export async function runOtelGenai(opts: ProducerOptions): Promise<OtelGenaiRun> {
  const telemetry = startTelemetry(opts, 'otel-genai-app');
  const instrumentation = new OpenAIInstrumentation({ captureMessageContent: true });
  const unregister = registerInstrumentations({ instrumentations: [instrumentation] });
  try {
    const { OpenAI } = require('openai') as typeof import('openai');
    const client: OpenAINs = new OpenAI({
      apiKey: 'sk-fake',
      baseURL: `${opts.llmUrl}/v1`,
      maxRetries: 0,
    });
    await scriptFakeLlm(opts.llmUrl, [
      ...CHAT_TOOLS_REPLIES,
      ...CHAT_FINDING_REPLIES,
      ...RESPONSES_REPLIES,
    ]);

    const tracer = trace.getTracer('otel-genai-app');
    const inSpan = (name: string, fn: () => Promise<void>) =>
      tracer.startActiveSpan(name, async (root) => {
        try {
          await fn();
          return root.spanContext().traceId;
        } finally {
          root.end();
        }
      });
    const toolsTraceId = await inSpan('handle_question', () => chatToolsConversation(client));
    const findingTraceId = await inSpan('summarize_log', () => chatFindingConversation(client));

    // "responses": the Responses API with a conversation id
    const responseTools = Object.entries(TOOL_DEFS).map(([name, def]) => ({
      type: 'function' as const,
      name,
      description: def.description,
      parameters: def.parameters,
      strict: true,
    }));
    const r1 = await client.responses.create({
      model: OPENAI_MODEL,
      instructions: SYSTEM_PROMPT,
      input: USER_QUESTION,
      tools: responseTools,
      conversation: RESPONSES_CONVERSATION,
    });
    const call = r1.output.find((o) => o.type === 'function_call');
    const stream = await client.responses.create({
      model: OPENAI_MODEL,
      instructions: SYSTEM_PROMPT,
      input: [
        { role: 'user', content: USER_QUESTION },
        ...(call
          ? [
              call,
              {
                type: 'function_call_output' as const,
                call_id: call.call_id,
                output: READ_FILE_RESULT,
              },
            ]
          : []),
      ],
      tools: responseTools,
      conversation: RESPONSES_CONVERSATION,
      stream: true,
    });
    for await (const _event of stream) {
      // drain
    }
    return { toolsTraceId, findingTraceId };
  } finally {
    unregister();
    instrumentation.disable();
    await telemetry.shutdown();
  }
}
