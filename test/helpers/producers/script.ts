/**
 * The scripted conversations every producer runs, with the numbers the end-to-end tests
 * assert. Two conversations per producer:
 * - "tools": system prompt, a user question, two tool calls (read_file, run_tests) whose
 *   results go back into the next call, then a final answer. Cache grows call by call.
 * - "finding": two calls of one conversation; the second sits at 80% of the model's window
 *   and stops on the output limit, so `context_too_full` and `output_cut_off` fire on it.
 */
import type { ScriptedReply, ScriptedUsage } from '../fake-llm.ts';

export const SYSTEM_PROMPT =
  'You are rotscope-bot, a careful build assistant. Read files before answering, run the tests, and cite paths.';
export const USER_QUESTION = 'Why does the build fail on main?';
export const FOLLOW_UP_QUESTION = 'Summarize the whole build log for me, every line.';
export const FINAL_ANSWER =
  'The build fails because src/build.ts imports ./gen/schema.js, which is never generated.';

/** A deterministic text of exactly `size` characters (ASCII, so chars = UTF-8 bytes). */
export function sized(label: string, size: number): string {
  const line = `${label}: lorem ipsum dolor sit amet, consectetur adipiscing elit\n`;
  let out = '';
  while (out.length < size) out += line;
  return out.slice(0, size);
}

export const READ_FILE_ARGS = { path: 'src/build.ts' };
export const READ_FILE_RESULT = sized('src/build.ts', 3000);
export const RUN_TESTS_ARGS = { suite: 'build' };
export const RUN_TESTS_RESULT = sized('FAIL build.test.ts', 1800);

export const TOOL_DEFS = {
  read_file: {
    description: 'Read a file of the repository',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' } },
      required: ['path'],
      additionalProperties: false,
    },
  },
  run_tests: {
    description: 'Run a test suite',
    parameters: {
      type: 'object',
      properties: { suite: { type: 'string' } },
      required: ['suite'],
      additionalProperties: false,
    },
  },
} as const;

/** Context tokens = fresh + cache read + cache write. */
export function contextOf(u: ScriptedUsage): number {
  return u.fresh + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0);
}

/** The "tools" conversation; call ids are prefixed per provider (`call_` / `toolu_`). */
export function toolsReplies(
  idPrefix: 'call_' | 'toolu_',
  usages: [ScriptedUsage, ScriptedUsage, ScriptedUsage],
) {
  const replies: [ScriptedReply, ScriptedReply, ScriptedReply] = [
    {
      toolCalls: [{ id: `${idPrefix}read_1`, name: 'read_file', input: READ_FILE_ARGS }],
      usage: usages[0],
    },
    {
      toolCalls: [{ id: `${idPrefix}test_1`, name: 'run_tests', input: RUN_TESTS_ARGS }],
      usage: usages[1],
    },
    { text: FINAL_ANSWER, usage: usages[2] },
  ];
  return replies;
}

/** OpenAI-side usages of the "tools" conversation (gpt-4o, 128k window). */
export const OPENAI_TOOLS_USAGE: [ScriptedUsage, ScriptedUsage, ScriptedUsage] = [
  { fresh: 1200, output: 40 },
  { fresh: 900, cacheRead: 1024, output: 30 },
  { fresh: 700, cacheRead: 2048, output: 120 },
];

/** Anthropic-side usages of the "tools" conversation (claude-sonnet-4-6, 200k window). */
export const ANTHROPIC_TOOLS_USAGE: [ScriptedUsage, ScriptedUsage, ScriptedUsage] = [
  { fresh: 12, cacheWrite: 1500, output: 45 },
  { fresh: 9, cacheRead: 1500, cacheWrite: 820, output: 35 },
  { fresh: 7, cacheRead: 2320, cacheWrite: 480, output: 130 },
];

export const OPENAI_MODEL = 'gpt-4o';
export const OPENAI_WINDOW = 128_000;
export const ANTHROPIC_MODEL = 'claude-sonnet-4-6';
export const ANTHROPIC_WINDOW = 200_000;

/**
 * The "finding" conversation: call 1 at 50% of the window, call 2 at 80% (102,400 of
 * 128,000; 160,000 of 200,000) stopping on the output limit.
 */
export const OPENAI_FINDING_USAGE: [ScriptedUsage, ScriptedUsage] = [
  { fresh: 4000, cacheRead: 60000, output: 500 },
  { fresh: 2400, cacheRead: 100000, output: 4096 },
];
export const ANTHROPIC_FINDING_USAGE: [ScriptedUsage, ScriptedUsage] = [
  { fresh: 20, cacheRead: 98000, cacheWrite: 1980, output: 500 },
  { fresh: 10, cacheRead: 150000, cacheWrite: 9990, output: 4096 },
];
export const FINDING_FIRST_ANSWER = 'The log has three phases: install, compile and test.';
export const FINDING_CUT_ANSWER =
  'Line 1: npm ci\nLine 2: tsc -p .\nLine 3: vitest run\nLine 4: FAIL build.test';
