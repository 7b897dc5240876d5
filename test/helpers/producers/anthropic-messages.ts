/**
 * The scripted conversations driven through an Anthropic TypeScript SDK client's
 * `messages.create` (1.x, or 0.x cast to the 1.x types: the call shapes used here are the
 * same), shared by the Traceloop Anthropic producer and the SDK's own spans. Call 1 is plain;
 * later calls stream (`stream: true`, read to the end).
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { ScriptedReply } from '../fake-llm.ts';
import {
  ANTHROPIC_FINDING_USAGE,
  ANTHROPIC_MODEL,
  ANTHROPIC_TOOLS_USAGE,
  FINDING_CUT_ANSWER,
  FINDING_FIRST_ANSWER,
  FOLLOW_UP_QUESTION,
  READ_FILE_RESULT,
  RUN_TESTS_RESULT,
  SYSTEM_PROMPT,
  TOOL_DEFS,
  USER_QUESTION,
  toolsReplies,
} from './script.ts';

type MessageParam = Anthropic.Messages.MessageParam;
type ContentBlock = Anthropic.Messages.ContentBlockParam;
/** Per-request options (the 1.x SDK takes `openTelemetry: { conversationId }` here). */
type RequestOptions = Anthropic.RequestOptions;

export const MESSAGES_TOOLS_REPLIES: ScriptedReply[] = toolsReplies(
  'toolu_',
  ANTHROPIC_TOOLS_USAGE,
).map((r) => ({
  ...r,
  expect: 'messages' as const,
}));
export const MESSAGES_FINDING_REPLIES: ScriptedReply[] = [
  { expect: 'messages', text: FINDING_FIRST_ANSWER, usage: ANTHROPIC_FINDING_USAGE[0] },
  {
    expect: 'messages',
    text: FINDING_CUT_ANSWER,
    finishReason: 'max_tokens',
    usage: ANTHROPIC_FINDING_USAGE[1],
  },
];

export const MESSAGES_TOOLS = Object.entries(TOOL_DEFS).map(([name, def]) => ({
  name,
  description: def.description,
  input_schema: def.parameters as unknown as Anthropic.Messages.Tool.InputSchema,
}));

/** The system prompt as one cacheable text block, as agents that use prompt caching send it. */
const SYSTEM = [
  { type: 'text' as const, text: SYSTEM_PROMPT, cache_control: { type: 'ephemeral' as const } },
];

/** "tools": system + question, read_file, run_tests, final answer (3 calls). */
export async function messagesToolsConversation(
  client: Anthropic,
  options?: RequestOptions,
): Promise<void> {
  const messages: MessageParam[] = [{ role: 'user', content: USER_QUESTION }];
  const base = { model: ANTHROPIC_MODEL, max_tokens: 1024, system: SYSTEM, tools: MESSAGES_TOOLS };
  const first = await client.messages.create({ ...base, messages }, options);
  messages.push({ role: 'assistant', content: first.content as ContentBlock[] });
  const firstUse = first.content.find((b) => b.type === 'tool_use')!;
  messages.push({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: firstUse.id, content: READ_FILE_RESULT }],
  });
  const second = await streamMessage(client, { ...base, messages }, options);
  messages.push({ role: 'assistant', content: second });
  const secondUse = second.find(
    (b) => b.type === 'tool_use',
  ) as Anthropic.Messages.ToolUseBlockParam;
  messages.push({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: secondUse.id, content: RUN_TESTS_RESULT }],
  });
  await streamMessage(client, { ...base, messages }, options);
}

/** "finding": call 1 at 50% of the window, call 2 at 80% stopping with `max_tokens`. */
export async function messagesFindingConversation(
  client: Anthropic,
  options?: RequestOptions,
  streamSecond = true,
): Promise<void> {
  const messages: MessageParam[] = [{ role: 'user', content: FOLLOW_UP_QUESTION }];
  const first = await client.messages.create(
    { model: ANTHROPIC_MODEL, max_tokens: 1024, system: SYSTEM, messages },
    options,
  );
  messages.push({ role: 'assistant', content: first.content as ContentBlock[] });
  messages.push({ role: 'user', content: 'Go on, all of it.' });
  const params = { model: ANTHROPIC_MODEL, max_tokens: 4096, system: SYSTEM, messages };
  if (streamSecond) await streamMessage(client, params, options);
  else await client.messages.create(params, options);
}

/** Streams one message to its end and rebuilds its content blocks. */
export async function streamMessage(
  client: Anthropic,
  params: Anthropic.Messages.MessageCreateParamsNonStreaming,
  options?: RequestOptions,
): Promise<ContentBlock[]> {
  const stream = await client.messages.create({ ...params, stream: true }, options);
  const blocks: ContentBlock[] = [];
  const json: string[] = [];
  for await (const event of stream) {
    if (event.type === 'content_block_start') {
      const b = event.content_block;
      if (b.type === 'text') blocks[event.index] = { type: 'text', text: '' };
      else if (b.type === 'tool_use') {
        blocks[event.index] = { type: 'tool_use', id: b.id, name: b.name, input: {} };
        json[event.index] = '';
      }
    } else if (event.type === 'content_block_delta') {
      const b = blocks[event.index];
      if (event.delta.type === 'text_delta' && b?.type === 'text') b.text += event.delta.text;
      if (event.delta.type === 'input_json_delta') json[event.index] += event.delta.partial_json;
    } else if (event.type === 'content_block_stop') {
      const b = blocks[event.index];
      if (b?.type === 'tool_use') b.input = JSON.parse(json[event.index] || '{}') as unknown;
    }
  }
  return blocks;
}
