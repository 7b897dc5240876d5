/**
 * Producer: OpenInference through the OpenAI Agents SDK (`@openai/agents` 0.14, the last line
 * on `openai` 6.x; 0.15+ needs `openai` 7). The agent's model calls go through the `openai`
 * client that `@arizeai/openinference-instrumentation-openai` patched (manuallyInstrument on
 * the ES module's `OpenAI` class), passed with `setDefaultOpenAIClient`; the Agents SDK's own tracing (to the
 * OpenAI platform) is disabled. The agent runs the "tools" conversation over the Responses
 * API: its runner executes the read_file and run_tests function tools between calls.
 * Conversation key: OpenInference `session.id` (setSession around the run).
 */
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled, tool } from '@openai/agents';
import { OpenAIInstrumentation } from '@arizeai/openinference-instrumentation-openai';
import * as openaiModule from 'openai';
import { z } from 'zod';
import { scriptFakeLlm, type ScriptedReply } from '../fake-llm.ts';
import { withSession } from './openinference.ts';
import { startTelemetry, type ProducerOptions } from './otel.ts';
import {
  OPENAI_MODEL,
  OPENAI_TOOLS_USAGE,
  READ_FILE_RESULT,
  RUN_TESTS_RESULT,
  SYSTEM_PROMPT,
  USER_QUESTION,
  toolsReplies,
} from './script.ts';

export const AGENT_SESSION = 'sess_openinference_agents';
export const AGENT_REPLIES: ScriptedReply[] = toolsReplies('call_', OPENAI_TOOLS_USAGE).map(
  (r) => ({
    ...r,
    expect: 'responses' as const,
  }),
);

export async function runOpenInferenceAgents(
  opts: ProducerOptions,
): Promise<{ finalOutput: string }> {
  const telemetry = startTelemetry(opts, 'openinference-agents-app');
  const instrumentation = new OpenAIInstrumentation({ tracerProvider: telemetry.tracerProvider });
  instrumentation.manuallyInstrument(openaiModule.OpenAI);
  try {
    setTracingDisabled(true);
    setDefaultOpenAIClient(
      new openaiModule.OpenAI({ apiKey: 'sk-fake', baseURL: `${opts.llmUrl}/v1`, maxRetries: 0 }),
    );
    await scriptFakeLlm(opts.llmUrl, AGENT_REPLIES);
    const agent = new Agent({
      name: 'build-assistant',
      instructions: SYSTEM_PROMPT,
      model: OPENAI_MODEL,
      tools: [
        tool({
          name: 'read_file',
          description: 'Read a file of the repository',
          parameters: z.object({ path: z.string() }),
          execute: () => READ_FILE_RESULT,
        }),
        tool({
          name: 'run_tests',
          description: 'Run a test suite',
          parameters: z.object({ suite: z.string() }),
          execute: () => RUN_TESTS_RESULT,
        }),
      ],
    });
    const result = await withSession(AGENT_SESSION, () => run(agent, USER_QUESTION));
    return { finalOutput: String(result.finalOutput) };
  } finally {
    instrumentation.disable();
    await telemetry.shutdown();
  }
}
