/**
 * Producer: LangChain.js (`@langchain/core` 1.4, `@langchain/openai` 1.5.8, the last that runs
 * on Node 20) traced by OpenInference (`@arizeai/openinference-instrumentation-langchain` 4.1),
 * instrumented with `manuallyInstrument` on `@langchain/core/callbacks/manager` (Arize's
 * documented way for ESM). A `ChatOpenAI` model with tools bound, tools made with `tool()` and
 * run with `tool.invoke(toolCall)`, as a LangChain agent loop does. Conversation key:
 * OpenInference `session.id`, set with `setSession` around each conversation. Conversations
 * "loop" (loop-script.ts; calls 5–8 streamed) and "finding" (call 2 streamed).
 */
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import * as callbackManager from '@langchain/core/callbacks/manager';
import {
  AIMessage,
  AIMessageChunk,
  HumanMessage,
  SystemMessage,
  isToolMessage,
  type BaseMessage,
} from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { scriptFakeLlm, type ScriptedReply } from '../fake-llm.ts';
import {
  AFTER_DROP_QUESTION,
  LOOP_QUESTION,
  LOOP_REPLIES,
  LOOP_TOOL_DEFS,
  LOOP_TOOL_RESULTS,
} from './loop-script.ts';
import { withSession } from './openinference.ts';
import { startTelemetry, type ProducerOptions } from './otel.ts';
import {
  FINDING_CUT_ANSWER,
  FINDING_FIRST_ANSWER,
  FOLLOW_UP_QUESTION,
  OPENAI_FINDING_USAGE,
  OPENAI_MODEL,
  SYSTEM_PROMPT,
} from './script.ts';

export const LOOP_SESSION = 'sess_langchain_loop';
export const FINDING_SESSION = 'sess_langchain_finding';

const FINDING_REPLIES: ScriptedReply[] = [
  { expect: 'chat', text: FINDING_FIRST_ANSWER, usage: OPENAI_FINDING_USAGE[0] },
  {
    expect: 'chat',
    text: FINDING_CUT_ANSWER,
    finishReason: 'length',
    usage: OPENAI_FINDING_USAGE[1],
  },
];

const TOOLS = Object.entries(LOOP_TOOL_DEFS).map(([name, d]) =>
  tool(() => LOOP_TOOL_RESULTS[name] ?? '', {
    name,
    description: d.description,
    schema: { type: 'object', properties: d.properties },
  }),
);

/**
 * One model call: `invoke`, or `stream` with the chunks concatenated (as LangChain's own agents
 * do; the streamed usage chunk included).
 */
async function call(
  model: ReturnType<ChatOpenAI['bindTools']> | ChatOpenAI,
  messages: BaseMessage[],
  stream: boolean,
): Promise<AIMessage | AIMessageChunk> {
  if (!stream) return (await model.invoke(messages)) as AIMessage;
  let acc: AIMessageChunk | undefined;
  for await (const chunk of await model.stream(messages)) {
    acc = acc === undefined ? (chunk as AIMessageChunk) : acc.concat(chunk as AIMessageChunk);
  }
  return acc!;
}

async function loopConversation(model: ChatOpenAI): Promise<void> {
  const bound = model.bindTools(TOOLS);
  let messages: BaseMessage[] = [new SystemMessage(SYSTEM_PROMPT), new HumanMessage(LOOP_QUESTION)];
  const follow = ['Go on and fix it.', 'Continue.'];
  for (let i = 0; i < 8; i++) {
    if (i === 6) {
      // the application trims its history to the last question, and says nothing
      messages = [new SystemMessage(SYSTEM_PROMPT), new HumanMessage(AFTER_DROP_QUESTION)];
    }
    const msg = await call(bound, messages, i >= 4);
    messages.push(msg);
    for (const tc of msg.tool_calls ?? []) {
      const t = TOOLS.find((x) => x.name === tc.name)!;
      // invoked with the tool call, a tool returns a ToolMessage (with the call's id)
      const out: unknown = await t.invoke({ ...tc, type: 'tool_call' });
      if (!isToolMessage(out)) throw new Error(`${tc.name} did not return a ToolMessage`);
      messages.push(out);
    }
    if (i === 3 || i === 4) messages.push(new HumanMessage(follow[i - 3]!));
  }
}

async function findingConversation(model: ChatOpenAI): Promise<void> {
  const messages: BaseMessage[] = [
    new SystemMessage(SYSTEM_PROMPT),
    new HumanMessage(FOLLOW_UP_QUESTION),
  ];
  messages.push(await call(model, messages, false));
  messages.push(new HumanMessage('Go on, all of it.'));
  await call(model, messages, true);
}

export async function runLangchainOpenInference(opts: ProducerOptions): Promise<void> {
  const telemetry = startTelemetry(opts, 'langchain-app');
  const instrumentation = new LangChainInstrumentation({
    tracerProvider: telemetry.tracerProvider,
  });
  instrumentation.manuallyInstrument(callbackManager);
  try {
    const model = new ChatOpenAI({
      model: OPENAI_MODEL,
      apiKey: 'sk-fake',
      maxTokens: 512,
      maxRetries: 0,
      configuration: { baseURL: `${opts.llmUrl}/v1` },
    });
    await scriptFakeLlm(opts.llmUrl, [...LOOP_REPLIES, ...FINDING_REPLIES]);
    await withSession(LOOP_SESSION, () => loopConversation(model));
    await withSession(FINDING_SESSION, () => findingConversation(model));
  } finally {
    instrumentation.disable();
    await telemetry.shutdown();
  }
}
