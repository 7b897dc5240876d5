/** Every producer of the end-to-end harness, by name (the file and fixture names). */
import { runAnthropicSdk } from './anthropic-sdk.ts';
import { runClaudeCode } from './claude-code.ts';
import { runLangchainOpenInference } from './langchain-openinference.ts';
import { runLangfuse } from './langfuse.ts';
import { runOpenInferenceAgents } from './openinference-agents.ts';
import { runOpenInference } from './openinference.ts';
import { runOtelGenai } from './otel-genai.ts';
import type { ProducerOptions } from './otel.ts';
import { runTraceloopAnthropic } from './traceloop-anthropic.ts';
import { runTraceloopOpenai } from './traceloop-openai.ts';
import { runVercelAi } from './vercel-ai.ts';

export interface Producer {
  /** The packages (and versions) doing the emitting. */
  packages: string;
  run(opts: ProducerOptions): Promise<unknown>;
}

export const PRODUCERS = {
  'otel-genai': {
    packages:
      '@opentelemetry/instrumentation-openai 0.21.0 + openai 6.49.0 (captureMessageContent)',
    run: runOtelGenai,
  },
  'traceloop-openai': {
    packages:
      '@traceloop/instrumentation-openai 0.27.0 + openai 6.49.0 (traceContent, no enrichTokens)',
    run: runTraceloopOpenai,
  },
  'traceloop-anthropic': {
    packages:
      '@traceloop/instrumentation-anthropic 0.27.0 + @anthropic-ai/sdk 0.137.0 (manuallyInstrument)',
    run: runTraceloopAnthropic,
  },
  openinference: {
    packages:
      '@arizeai/openinference-instrumentation-openai 4.2.7 + openai 6.49.0 (chat completions)',
    run: runOpenInference,
  },
  'openinference-agents': {
    packages:
      '@arizeai/openinference-instrumentation-openai 4.2.7 + @openai/agents 0.14.3 (Responses API)',
    run: runOpenInferenceAgents,
  },
  'vercel-ai': {
    packages:
      'ai 6.0.325 + @ai-sdk/openai 3.0.139 + @ai-sdk/anthropic 3.0.140 (experimental_telemetry)',
    run: runVercelAi,
  },
  'anthropic-sdk': {
    packages: '@anthropic-ai/sdk 1.14.0 own spans (contentMode: content)',
    run: runAnthropicSdk,
  },
  'langchain-openinference': {
    packages:
      '@arizeai/openinference-instrumentation-langchain 4.1.1 + @langchain/core 1.4.0 + @langchain/openai 1.5.8',
    run: runLangchainOpenInference,
  },
  langfuse: {
    packages:
      '@langfuse/otel 5.11.1 (LangfuseSpanProcessor, OTLP exporter to rotscope) + @langfuse/tracing 5.11.1 + @langfuse/openai 5.11.1 + openai 6.49.0',
    run: runLangfuse,
  },
  'claude-code': {
    packages:
      'SIMULATED Claude Code 2.1.x telemetry: the OTel SDK reproducing the documented shapes (the binary cannot run here)',
    run: runClaudeCode,
  },
} satisfies Record<string, Producer>;

export type ProducerName = keyof typeof PRODUCERS;
