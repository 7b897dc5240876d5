/**
 * A scripted fake of the OpenAI Chat Completions API for driving the real OpenCode offline
 * (test/e2e/opencode-real; modelled on ../shared/agent-harness/opencode-copilot/fake-openai-chat.mjs),
 * over the shared protocol of ./fake-chat-completions.ts, always answering in SSE chunks. Each
 * request is classed as OpenCode's compaction summary (its last user message starts "Here is the
 * conversation so far:"), its title generator (system prompt "You are a title generator"), or
 * the main thread, and answered with the next scripted answer of that queue.
 */
import {
  messagesOf,
  startFakeChat,
  textOf,
  type ChatAnswer,
  type ChatRequest,
  type ChatUsage,
  type FakeChat,
  type Json,
} from './fake-chat-completions.ts';
import type { FakeListen } from './fake-listen.ts';

/** Token usage of one answer: fixed numbers, or `estimate` (request bytes / 4). */
export type OpenCodeUsage = ChatUsage;
/** One scripted answer. */
export type OpenCodeAnswer = ChatAnswer;

export interface OpenCodeScript {
  main: OpenCodeAnswer[];
  /** The compaction summary requests; default a short summary, usage estimated. */
  summary?: OpenCodeAnswer[];
  /** When the main queue is empty. Default: a short final text. */
  fallback?: OpenCodeAnswer;
}

type Kind = 'main' | 'summary' | 'title';
/** One request as the fake saw it. */
export type OpenCodeRequest = ChatRequest<Kind>;
export type FakeOpenCodeApi = FakeChat<Kind>;

const SUMMARY =
  '## Goal\nInspect the files in the working directory.\n## Progress\nThe files were read.\n' +
  '## Next\nReport the findings to the user.';

function classify(body: Json): Kind {
  const { messages, system } = messagesOf(body);
  const last = textOf(messages.filter((m) => m.role === 'user').at(-1));
  if (last.startsWith('Here is the conversation so far:')) return 'summary';
  if (system.includes('You are a title generator')) return 'title';
  return 'main';
}

export function startFakeOpenCodeApi(
  script: OpenCodeScript,
  listen: FakeListen,
  workDir: string,
): Promise<FakeOpenCodeApi> {
  const queues = { main: [...script.main], summary: [...(script.summary ?? [])] };
  const answerOf = (kind: Kind): OpenCodeAnswer => {
    if (kind === 'title') return { text: 'Inspect files', usage: { prompt: 500, output: 5 } };
    const next = queues[kind].shift();
    if (next) return next;
    if (kind === 'summary') return { text: SUMMARY, usage: { estimate: true, output: 300 } };
    return script.fallback ?? { text: 'Done.', usage: { estimate: true } };
  };
  return startFakeChat({ classify, answerOf, alwaysStream: true }, listen, workDir);
}
