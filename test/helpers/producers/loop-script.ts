/**
 * The 8-call agent loop of issue 12, for producers that wrap the OpenAI chat client (LangChain
 * through OpenInference, Langfuse): one conversation that shows each detector once.
 * - calls 1–4: read_file returns a large result (3000 chars) that stays in the input of calls
 *   2, 3 and 4 while two small tools run → `tool_takeover` by read_file at call 4;
 * - call 5: a text answer cut at the output limit (`length`) → `output_cut_off` (text);
 * - call 6: a tool call cut at the output limit (`length`) → `output_cut_off` (tool call);
 * - call 7: the application drops the old history without saying so; usage falls from
 *   30,000 to 6,000 tokens → `history_lost` (lost);
 * - call 8: a final answer.
 * Usage stays below 70% of gpt-4o's 128k window, so `context_too_full` never fires.
 */
import type { ScriptedReply, ScriptedUsage } from '../fake-llm.ts';
import { READ_FILE_ARGS, READ_FILE_RESULT, sized } from './script.ts';

export const LOOP_QUESTION = 'Find out why the nightly build is red and fix it.';
export const LIST_DIR_ARGS = { path: 'src' };
export const LIST_DIR_RESULT = sized('src/', 120);
export const GIT_LOG_ARGS = { n: 3 };
export const GIT_LOG_RESULT = sized('commit', 150);
export const CUT_TEXT = 'The nightly build is red because the schema generator';
export const FIX_ARGS = { path: 'src/build.ts', patch: '--- a/src/build.ts' };
export const LOOP_FINAL = 'Fixed: the schema generator runs before the build again.';
export const AFTER_DROP_QUESTION = 'Write the patch to src/build.ts again, shorter.';

/** Tools of the loop, as JSON schemas. */
export const LOOP_TOOL_DEFS = {
  read_file: { description: 'Read a file', properties: { path: { type: 'string' } } },
  list_dir: { description: 'List a directory', properties: { path: { type: 'string' } } },
  git_log: { description: 'Show recent commits', properties: { n: { type: 'number' } } },
  write_file: {
    description: 'Write a patch to a file',
    properties: { path: { type: 'string' }, patch: { type: 'string' } },
  },
} as const;

/** Tool results by name (what the application's tools return). */
export const LOOP_TOOL_RESULTS: Record<string, string> = {
  read_file: READ_FILE_RESULT,
  list_dir: LIST_DIR_RESULT,
  git_log: GIT_LOG_RESULT,
  write_file: 'ok',
};

/** Usage per call: growing, then the unmarked drop at call 7. */
export const LOOP_USAGE: ScriptedUsage[] = [
  { fresh: 20000, output: 30 },
  { fresh: 1000, cacheRead: 22000, output: 30 },
  { fresh: 500, cacheRead: 24000, output: 30 },
  { fresh: 500, cacheRead: 25000, output: 200 },
  { fresh: 700, cacheRead: 26000, output: 512 },
  { fresh: 1000, cacheRead: 28000, output: 512 },
  { fresh: 6000, output: 80 },
  { fresh: 300, cacheRead: 6000, output: 40 },
];

/** The fake provider's replies, in call order. */
export const LOOP_REPLIES: ScriptedReply[] = [
  { toolCalls: [{ id: 'call_loop_1', name: 'read_file', input: READ_FILE_ARGS }] },
  { toolCalls: [{ id: 'call_loop_2', name: 'list_dir', input: LIST_DIR_ARGS }] },
  { toolCalls: [{ id: 'call_loop_3', name: 'git_log', input: GIT_LOG_ARGS }] },
  { text: 'The generator step was removed in the last commit.' },
  { text: CUT_TEXT, finishReason: 'length' },
  {
    toolCalls: [{ id: 'call_loop_6', name: 'write_file', input: FIX_ARGS }],
    finishReason: 'length',
  },
  { toolCalls: [{ id: 'call_loop_7', name: 'write_file', input: FIX_ARGS }] },
  { text: LOOP_FINAL },
].map((r, i) => ({ ...r, expect: 'chat' as const, usage: LOOP_USAGE[i]! }));

/** Context tokens of call `i` as the provider counted them (OpenAI: inclusive). */
export function loopContext(i: number): number {
  const u = LOOP_USAGE[i]!;
  return u.fresh + (u.cacheRead ?? 0);
}
