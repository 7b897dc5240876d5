/**
 * The scripted conversations driven through the real `openai` 6.x client's chat completions,
 * shared by the producers that instrument that client (OTel GenAI, Traceloop, OpenInference).
 * Call 1 is plain; later calls stream with `stream_options.include_usage`.
 */
import type OpenAINs from 'openai';
import type { ScriptedReply } from '../fake-llm.ts';
import {
  FINDING_CUT_ANSWER,
  FINDING_FIRST_ANSWER,
  FOLLOW_UP_QUESTION,
  OPENAI_FINDING_USAGE,
  OPENAI_MODEL,
  OPENAI_TOOLS_USAGE,
  READ_FILE_RESULT,
  RUN_TESTS_RESULT,
  SYSTEM_PROMPT,
  TOOL_DEFS,
  USER_QUESTION,
  toolsReplies,
} from './script.ts';

type Client = OpenAINs;
type Message = OpenAINs.Chat.ChatCompletionMessageParam;

export const CHAT_TOOLS_REPLIES: ScriptedReply[] = toolsReplies('call_', OPENAI_TOOLS_USAGE).map(
  (r) => ({
    ...r,
    expect: 'chat' as const,
  }),
);
export const CHAT_FINDING_REPLIES: ScriptedReply[] = [
  { expect: 'chat', text: FINDING_FIRST_ANSWER, usage: OPENAI_FINDING_USAGE[0] },
  {
    expect: 'chat',
    text: FINDING_CUT_ANSWER,
    finishReason: 'length',
    usage: OPENAI_FINDING_USAGE[1],
  },
];

export const CHAT_TOOLS = Object.entries(TOOL_DEFS).map(([name, def]) => ({
  type: 'function' as const,
  function: { name, description: def.description, parameters: def.parameters },
}));

/** "tools": system + question, read_file, run_tests, final answer (3 calls). */
export async function chatToolsConversation(client: Client): Promise<void> {
  const messages: Message[] = [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: USER_QUESTION },
  ];
  const first = await client.chat.completions.create({
    model: OPENAI_MODEL,
    messages,
    tools: CHAT_TOOLS,
  });
  const firstMsg = first.choices[0]!.message;
  messages.push(firstMsg);
  const firstCall = firstMsg.tool_calls![0]!;
  messages.push({ role: 'tool', tool_call_id: firstCall.id, content: READ_FILE_RESULT });
  const secondMsg = await streamChat(client, messages, CHAT_TOOLS);
  messages.push(secondMsg);
  messages.push({
    role: 'tool',
    tool_call_id: secondMsg.tool_calls![0]!.id,
    content: RUN_TESTS_RESULT,
  });
  await streamChat(client, messages, CHAT_TOOLS);
}

/**
 * "finding": call 1 at 50% of the window, call 2 at 80% stopping with `length`; call 2 is
 * streamed unless `streamSecond` is false (for producers that drop streamed usage).
 */
export async function chatFindingConversation(client: Client, streamSecond = true): Promise<void> {
  const messages: Message[] = [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: FOLLOW_UP_QUESTION },
  ];
  const first = await client.chat.completions.create({ model: OPENAI_MODEL, messages });
  messages.push(first.choices[0]!.message, { role: 'user', content: 'Go on, all of it.' });
  if (streamSecond) await streamChat(client, messages, undefined, 4096);
  else await client.chat.completions.create({ model: OPENAI_MODEL, messages, max_tokens: 4096 });
}

export async function streamChat(
  client: Client,
  messages: Message[],
  tools: OpenAINs.Chat.ChatCompletionTool[] | undefined,
  maxTokens?: number,
): Promise<OpenAINs.Chat.ChatCompletionAssistantMessageParam> {
  const stream = await client.chat.completions.create({
    model: OPENAI_MODEL,
    messages,
    ...(tools ? { tools } : {}),
    ...(maxTokens ? { max_tokens: maxTokens } : {}),
    stream: true,
    stream_options: { include_usage: true },
  });
  let content = '';
  const calls: { id: string; name: string; args: string }[] = [];
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta;
    if (!delta) continue;
    if (delta.content) content += delta.content;
    for (const tc of delta.tool_calls ?? []) {
      const slot = (calls[tc.index] ??= { id: '', name: '', args: '' });
      if (tc.id) slot.id = tc.id;
      if (tc.function?.name) slot.name = tc.function.name;
      if (tc.function?.arguments) slot.args += tc.function.arguments;
    }
  }
  return {
    role: 'assistant',
    content: content || null,
    ...(calls.length
      ? {
          tool_calls: calls.map((c) => ({
            id: c.id,
            type: 'function' as const,
            function: { name: c.name, arguments: c.args },
          })),
        }
      : {}),
  };
}
