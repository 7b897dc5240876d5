/**
 * Producer: Vercel AI SDK 6 (`ai` 6.0 with `@ai-sdk/openai` 3.0 and `@ai-sdk/anthropic` 3.0),
 * legacy `ai.*` spans from `experimental_telemetry: { isEnabled: true, metadata: { sessionId } }`
 * through the globally registered tracer provider. Multi-step tool calling: the SDK runs the
 * tools itself between steps, so one `ai.generateText` / `ai.streamText` root holds one
 * `*.doGenerate` / `*.doStream` span per model call and one `ai.toolCall` per tool; the roots
 * repeat the steps' usage and are not calls.
 * Conversations:
 * - "tools" (`generateText`, OpenAI Responses model, session TOOLS_SESSION);
 * - "anthropic" (`streamText`, Anthropic messages with cache reads/writes, session ANTHROPIC_SESSION);
 * - "finding" (two `generateText` calls on the OpenAI chat-completions model, session
 *   FINDING_SESSION; the second at 80% of the window, stopping with `length`).
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool, type ModelMessage } from 'ai';
import { z } from 'zod';
import { scriptFakeLlm, type ScriptedReply } from '../fake-llm.ts';
import { startTelemetry, type ProducerOptions } from './otel.ts';
import {
  ANTHROPIC_MODEL,
  ANTHROPIC_TOOLS_USAGE,
  FINDING_CUT_ANSWER,
  FINDING_FIRST_ANSWER,
  FOLLOW_UP_QUESTION,
  OPENAI_FINDING_USAGE,
  OPENAI_MODEL,
  OPENAI_TOOLS_USAGE,
  READ_FILE_RESULT,
  RUN_TESTS_RESULT,
  SYSTEM_PROMPT,
  USER_QUESTION,
  toolsReplies,
} from './script.ts';

export const TOOLS_SESSION = 'sess_vercel_tools';
export const ANTHROPIC_SESSION = 'sess_vercel_anthropic';
export const FINDING_SESSION = 'sess_vercel_finding';
export const FUNCTION_ID = 'build-assistant';

export const TOOLS_REPLIES: ScriptedReply[] = toolsReplies('call_', OPENAI_TOOLS_USAGE).map(
  (r) => ({
    ...r,
    expect: 'responses' as const,
  }),
);
export const ANTHROPIC_REPLIES: ScriptedReply[] = toolsReplies('toolu_', ANTHROPIC_TOOLS_USAGE).map(
  (r) => ({
    ...r,
    expect: 'messages' as const,
  }),
);
export const FINDING_REPLIES: ScriptedReply[] = [
  { expect: 'chat', text: FINDING_FIRST_ANSWER, usage: OPENAI_FINDING_USAGE[0] },
  {
    expect: 'chat',
    text: FINDING_CUT_ANSWER,
    finishReason: 'length',
    usage: OPENAI_FINDING_USAGE[1],
  },
];

const tools = {
  read_file: tool({
    description: 'Read a file of the repository',
    inputSchema: z.object({ path: z.string() }),
    execute: () => Promise.resolve(READ_FILE_RESULT),
  }),
  run_tests: tool({
    description: 'Run a test suite',
    inputSchema: z.object({ suite: z.string() }),
    execute: () => Promise.resolve(RUN_TESTS_RESULT),
  }),
};

const telemetryFor = (sessionId: string) => ({
  isEnabled: true,
  functionId: FUNCTION_ID,
  metadata: { sessionId },
});

export async function runVercelAi(opts: ProducerOptions): Promise<void> {
  const telemetry = startTelemetry(opts, 'vercel-ai-app', 'json');
  try {
    const openai = createOpenAI({ apiKey: 'sk-fake', baseURL: `${opts.llmUrl}/v1` });
    const anthropic = createAnthropic({ apiKey: 'sk-ant-fake', baseURL: `${opts.llmUrl}/v1` });
    await scriptFakeLlm(opts.llmUrl, [...TOOLS_REPLIES, ...ANTHROPIC_REPLIES, ...FINDING_REPLIES]);

    await generateText({
      model: openai(OPENAI_MODEL),
      system: SYSTEM_PROMPT,
      prompt: USER_QUESTION,
      tools,
      stopWhen: stepCountIs(5),
      maxRetries: 0,
      experimental_telemetry: telemetryFor(TOOLS_SESSION),
    });

    const streamed = streamText({
      model: anthropic(ANTHROPIC_MODEL),
      system: SYSTEM_PROMPT,
      prompt: USER_QUESTION,
      tools,
      stopWhen: stepCountIs(5),
      maxRetries: 0,
      experimental_telemetry: telemetryFor(ANTHROPIC_SESSION),
    });
    await streamed.consumeStream();
    await streamed.text;

    const messages: ModelMessage[] = [{ role: 'user', content: FOLLOW_UP_QUESTION }];
    const first = await generateText({
      model: openai.chat(OPENAI_MODEL),
      system: SYSTEM_PROMPT,
      messages,
      maxRetries: 0,
      experimental_telemetry: telemetryFor(FINDING_SESSION),
    });
    messages.push(
      { role: 'assistant', content: first.text },
      { role: 'user', content: 'Go on, all of it.' },
    );
    await generateText({
      model: openai.chat(OPENAI_MODEL),
      system: SYSTEM_PROMPT,
      messages,
      maxOutputTokens: 4096,
      maxRetries: 0,
      experimental_telemetry: telemetryFor(FINDING_SESSION),
    });
  } finally {
    await telemetry.shutdown();
  }
}
