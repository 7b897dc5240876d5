/**
 * Producer: the Langfuse JS SDK 5.11 exporting to rotscope instead of Langfuse: a tracer
 * provider whose only processor is `@langfuse/otel`'s `LangfuseSpanProcessor` with an OTLP/HTTP
 * exporter pointed at rotscope (the processor's documented `exporter` option), `@langfuse/openai`
 * `observeOpenAI` around the `openai` 6 client, tools traced with `startActiveObservation(…,
 * { asType: 'tool' })`, and the session set with `propagateAttributes({ sessionId })` (Langfuse's
 * documented way). Conversations: "loop" (loop-script.ts) and "finding" (openai-chat.ts).
 * What it sends: no `gen_ai.*` or `llm.*` keys; `langfuse.observation.*` (type, input, output,
 * model.name, usage_details, model.parameters) and `session.id` (docs/producers.md).
 */
import { OTLPTraceExporter as OTLPTraceExporterJson } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPTraceExporterProto } from '@opentelemetry/exporter-trace-otlp-proto';
import { context, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { LangfuseSpanProcessor } from '@langfuse/otel';
import { observeOpenAI } from '@langfuse/openai';
import {
  propagateAttributes,
  setLangfuseTracerProvider,
  startActiveObservation,
} from '@langfuse/tracing';
import OpenAI from 'openai';
import { scriptFakeLlm } from '../fake-llm.ts';
import {
  AFTER_DROP_QUESTION,
  LOOP_QUESTION,
  LOOP_REPLIES,
  LOOP_TOOL_DEFS,
  LOOP_TOOL_RESULTS,
} from './loop-script.ts';
import { CHAT_FINDING_REPLIES, chatFindingConversation } from './openai-chat.ts';
import type { ProducerOptions } from './otel.ts';
import { OPENAI_MODEL, SYSTEM_PROMPT } from './script.ts';

export const LOOP_SESSION = 'sess_langfuse_loop';
export const FINDING_SESSION = 'sess_langfuse_finding';

type Message = OpenAI.Chat.ChatCompletionMessageParam;

const TOOLS: OpenAI.Chat.ChatCompletionTool[] = Object.entries(LOOP_TOOL_DEFS).map(([name, d]) => ({
  type: 'function',
  function: {
    name,
    description: d.description,
    parameters: { type: 'object', properties: d.properties },
  },
}));

/** Runs the tool calls of an assistant message as Langfuse tool observations. */
async function runTools(msg: OpenAI.Chat.ChatCompletionMessage, messages: Message[]) {
  for (const call of msg.tool_calls ?? []) {
    if (call.type !== 'function') continue;
    const name = call.function.name;
    const result = await startActiveObservation(
      name,
      async (tool) => {
        const output = LOOP_TOOL_RESULTS[name] ?? '';
        tool.update({ input: JSON.parse(call.function.arguments) as unknown, output });
        return output;
      },
      { asType: 'tool' },
    );
    messages.push({ role: 'tool', tool_call_id: call.id, content: result });
  }
}

/** The 8-call loop of loop-script.ts through the wrapped client (calls 5–8 streamed). */
async function loopConversation(client: OpenAI): Promise<void> {
  let messages: Message[] = [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: LOOP_QUESTION },
  ];
  const follow = ['Go on and fix it.', 'Continue.'];
  for (let i = 0; i < 8; i++) {
    if (i === 6) {
      // the application trims its history to the last question, and says nothing
      messages = [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: AFTER_DROP_QUESTION },
      ];
    }
    const res = await client.chat.completions.create({
      model: OPENAI_MODEL,
      messages,
      tools: TOOLS,
      max_tokens: 512,
    });
    const msg = res.choices[0]!.message;
    messages.push(msg);
    await runTools(msg, messages);
    if (i === 3 || i === 4) messages.push({ role: 'user', content: follow[i - 3]! });
  }
}

export async function runLangfuse(opts: ProducerOptions): Promise<void> {
  const base = opts.rotscopeUrl.replace(/\/+$/, '');
  const headers: Record<string, string> = opts.token
    ? { Authorization: `Bearer ${opts.token}` }
    : {};
  const exporter =
    opts.protocol === 'json'
      ? new OTLPTraceExporterJson({ url: `${base}/v1/traces`, headers })
      : new OTLPTraceExporterProto({ url: `${base}/v1/traces`, headers });
  const processor = new LangfuseSpanProcessor({
    publicKey: 'pk-lf-fake',
    secretKey: 'sk-lf-fake',
    exporter,
  });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'langfuse-app' }),
    spanProcessors: [processor],
  });
  provider.register();
  setLangfuseTracerProvider(provider);
  try {
    const client = observeOpenAI(
      new OpenAI({ apiKey: 'sk-fake', baseURL: `${opts.llmUrl}/v1`, maxRetries: 0 }),
    );
    await scriptFakeLlm(opts.llmUrl, [...LOOP_REPLIES, ...CHAT_FINDING_REPLIES]);
    await propagateAttributes({ sessionId: LOOP_SESSION }, () => loopConversation(client));
    await propagateAttributes({ sessionId: FINDING_SESSION }, () =>
      chatFindingConversation(client),
    );
  } finally {
    await provider.forceFlush();
    await provider.shutdown();
    setLangfuseTracerProvider(null);
    trace.disable();
    context.disable();
  }
}
