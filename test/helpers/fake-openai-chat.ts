/**
 * A scripted fake of the OpenAI Chat Completions API for driving the real Qwen Code offline
 * (test/e2e/qwen-code-real; modelled on ../shared/agent-harness/qwen-sdk/fake-openai-chat.mjs),
 * over the shared protocol of ./fake-chat-completions.ts (SSE when the body streams). Each
 * request is classed, in this order, as the history compressor's (its last user message or
 * system prompt asks for the `<state_snapshot>` XML), the managed memory extractor's (a user
 * message "Managed memory has TWO directories"), the main thread's (a request that offers tools),
 * or an auxiliary one, and answered with the next scripted answer of that queue.
 */
import {
  messagesOf,
  startFakeChat,
  textOf,
  type ChatAnswer,
  type FakeChat,
  type Json,
} from './fake-chat-completions.ts';
import type { FakeListen } from './fake-listen.ts';

export type { ChatAnswer, ChatRequest, ChatUsage } from './fake-chat-completions.ts';

export interface ChatScript {
  main: ChatAnswer[];
  /** The compressor's requests; default a short `<state_snapshot>`, usage estimated. */
  compress?: ChatAnswer[];
  /** The memory extractor's requests; default a short text, usage estimated. */
  memory?: ChatAnswer[];
  /** When the main queue is empty. Default: a short final text. */
  fallback?: ChatAnswer;
}

export type FakeOpenAiChat = FakeChat;

const SNAPSHOT =
  '<analysis>The user asked to read files; they were read.</analysis>\n<state_snapshot>\n' +
  '<overall_goal>Inspect the project and report.</overall_goal>\n' +
  '<key_knowledge>Files were read; tools ran.</key_knowledge>\n' +
  '<current_plan>1. [DONE] read files 2. [TODO] report</current_plan>\n</state_snapshot>';

function classify(body: Json): string {
  const { messages, system } = messagesOf(body);
  const users = messages.filter((m) => m.role === 'user');
  const last = textOf(users.at(-1));
  if ((last + system).includes('<state_snapshot> XML')) return 'compress';
  if (users.some((m) => textOf(m).includes('Managed memory has TWO directories'))) return 'memory';
  return Array.isArray(body.tools) && body.tools.length > 0 ? 'main' : 'aux';
}

export function startFakeOpenAiChat(
  script: ChatScript,
  listen: FakeListen,
  workDir: string,
): Promise<FakeOpenAiChat> {
  const queues: Record<string, ChatAnswer[]> = {
    main: [...script.main],
    compress: [...(script.compress ?? [])],
    memory: [...(script.memory ?? [])],
  };
  const answerOf = (kind: string): ChatAnswer => {
    const next = queues[kind]?.shift();
    if (next) return next;
    if (kind === 'compress') return { text: SNAPSHOT, usage: { estimate: true, output: 300 } };
    if (kind === 'memory') return { text: 'Nothing to remember.', usage: { estimate: true } };
    if (kind === 'aux') return { text: 'OK', usage: { prompt: 500, output: 5 } };
    return script.fallback ?? { text: 'Done.', usage: { estimate: true } };
  };
  return startFakeChat(
    {
      classify,
      answerOf,
      defaultText: (kind) => (kind === 'compress' ? SNAPSHOT : 'OK.'),
    },
    listen,
    workDir,
  );
}
