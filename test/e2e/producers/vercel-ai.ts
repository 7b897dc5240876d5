/**
 * End to end: Vercel AI SDK 6 (`ai` 6.0, `@ai-sdk/openai` 3.0, `@ai-sdk/anthropic` 3.0) with
 * `experimental_telemetry`, OTLP/HTTP JSON to a running rotscope, the fake LLM as provider.
 * Multi-step tool calling: the `ai.generateText` / `ai.streamText` roots repeat their steps'
 * usage and must not count as calls.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  callsOf,
  inclusiveUsage,
  partsOf,
  spansOf,
  toolResultsOf,
  toolsConversationParts,
  usageOf,
  type Harness,
  type ProducerRun,
} from '../../helpers/producers/e2e.ts';
import {
  ANTHROPIC_MODEL,
  ANTHROPIC_TOOLS_USAGE,
  ANTHROPIC_WINDOW,
  OPENAI_FINDING_USAGE,
  OPENAI_MODEL,
  OPENAI_TOOLS_USAGE,
  OPENAI_WINDOW,
  READ_FILE_RESULT,
  RUN_TESTS_RESULT,
  SYSTEM_PROMPT,
} from '../../helpers/producers/script.ts';
import {
  ANTHROPIC_SESSION,
  FINDING_SESSION,
  TOOLS_SESSION,
} from '../../helpers/producers/vercel-ai.ts';

let h: Harness;

const FINISH_TOOLS = [
  ['tool-calls', 'tool_call', true, 'read_file'],
  ['tool-calls', 'tool_call', true, 'run_tests'],
  ['stop', 'stop', false, null],
];

/** The checks of this producer's row in test/e2e/producers.test.ts. */
export function vercelAiRows(ctx: ProducerRun<void>): void {
  beforeAll(() => {
    h = ctx.h;
  });

  describe('Vercel AI SDK 6 (ai.* spans, experimental_telemetry)', () => {
    it('the SDK ran both tool loops and the finding calls against the fake provider', async () => {
      expect(h.llm.pending()).toBe(0);
      expect(h.llm.requests.map((r) => [r.endpoint, r.stream])).toEqual([
        ['responses', false],
        ['responses', false],
        ['responses', false],
        ['messages', true],
        ['messages', true],
        ['messages', true],
        ['chat', false],
        ['chat', false],
      ]);
    });

    it('roles: roots are agent steps (aggregates), do* spans are calls, ai.toolCall spans are tools', async () => {
      const spans = await spansOf(h);
      const count = (name: string, role: string) =>
        spans.filter((s) => s.name === name && s.role === role).length;
      expect(count('ai.generateText', 'agent_step')).toBe(3);
      expect(count('ai.streamText', 'agent_step')).toBe(1);
      expect(count('ai.generateText.doGenerate', 'llm_call')).toBe(5);
      expect(count('ai.streamText.doStream', 'llm_call')).toBe(3);
      expect(count('ai.toolCall', 'tool')).toBe(4);
      expect(spans).toHaveLength(16);
      // 8 provider calls, not 12: the roots' repeated usage is not a call
      expect(await callsOf(h)).toHaveLength(8);
    });

    it('"tools" (OpenAI Responses, generateText): one run, sessionId metadata is the conversation', async () => {
      const calls = await callsOf(h, TOOLS_SESSION);
      expect(calls).toHaveLength(3);
      expect(new Set(calls.map((c) => c.run_id)).size).toBe(1);
      for (const c of calls) {
        expect(c).toMatchObject({
          conversation_synthetic: false,
          stream_key: `${TOOLS_SESSION}|main`,
          run_id: c.trace_id,
          agent_id: null,
          side_call: null,
          producer: 'vercel',
          provider: 'openai.responses',
          request_model: OPENAI_MODEL,
          response_model: OPENAI_MODEL,
          context_window: OPENAI_WINDOW,
          window_source: 'catalog',
        });
      }
      expect(calls.map(usageOf)).toEqual(
        OPENAI_TOOLS_USAGE.map((u) => inclusiveUsage(u, u.cacheRead ?? 0, null, 'inclusive')),
      );
      expect(
        calls.map((c) => [
          c.finish_reason_raw,
          c.finish_class,
          c.output_tool_call,
          c.output_tool_name,
        ]),
      ).toEqual(FINISH_TOOLS);
      expect(calls.map(partsOf)).toEqual(
        toolsConversationParts(
          SYSTEM_PROMPT.length,
          READ_FILE_RESULT.length,
          RUN_TESTS_RESULT.length,
        ),
      );
    });

    it('"anthropic" (streamText): v6 input_tokens include cache reads and writes (inclusive)', async () => {
      const calls = await callsOf(h, ANTHROPIC_SESSION);
      expect(calls).toHaveLength(3);
      for (const c of calls) {
        expect(c).toMatchObject({
          stream_key: `${ANTHROPIC_SESSION}|main`,
          producer: 'vercel',
          provider: 'anthropic.messages',
          request_model: ANTHROPIC_MODEL,
          context_window: ANTHROPIC_WINDOW,
          window_source: 'catalog',
        });
      }
      expect(calls.map(usageOf)).toEqual(
        ANTHROPIC_TOOLS_USAGE.map((u) =>
          inclusiveUsage(u, u.cacheRead ?? 0, u.cacheWrite ?? 0, 'inclusive'),
        ),
      );
      expect(
        calls.map((c) => [
          c.finish_reason_raw,
          c.finish_class,
          c.output_tool_call,
          c.output_tool_name,
        ]),
      ).toEqual(FINISH_TOOLS);
      expect(calls.map(partsOf)).toEqual(
        toolsConversationParts(
          SYSTEM_PROMPT.length,
          READ_FILE_RESULT.length,
          RUN_TESTS_RESULT.length,
        ),
      );
    });

    it('tool results from ai.toolCall spans, by name and call id', async () => {
      const rows = await toolResultsOf(h);
      expect(
        rows.map((r) => [r.conversation_id, r.tool_name, r.tool_call_id, r.size_unit, r.source]),
      ).toEqual([
        [TOOLS_SESSION, 'read_file', 'call_read_1', 'chars', 'tool_span'],
        [TOOLS_SESSION, 'run_tests', 'call_test_1', 'chars', 'tool_span'],
        [ANTHROPIC_SESSION, 'read_file', 'toolu_read_1', 'chars', 'tool_span'],
        [ANTHROPIC_SESSION, 'run_tests', 'toolu_test_1', 'chars', 'tool_span'],
      ]);
    });

    // `ai.toolCall.result` is the JSON of the tool's output (here a JSON string): the tool
    // result is sized as the decoded output the model got (3000, as the next call's parts say),
    // not as the JSON text (3044).
    it('tool results are sized as the text the model got (same as the parts)', async () => {
      const rows = await toolResultsOf(h);
      expect(rows.map((r) => r.result_size)).toEqual([
        READ_FILE_RESULT.length,
        RUN_TESTS_RESULT.length,
        READ_FILE_RESULT.length,
        RUN_TESTS_RESULT.length,
      ]);
    });

    it('"finding": two runs of one session; the second call at 80% of the window stopped on length', async () => {
      const calls = await callsOf(h, FINDING_SESSION);
      expect(calls).toHaveLength(2);
      expect(calls[0]!.run_id).not.toBe(calls[1]!.run_id);
      expect(calls.map((c) => c.provider)).toEqual(['openai.chat', 'openai.chat']);
      expect(calls.map(usageOf)).toEqual(
        OPENAI_FINDING_USAGE.map((u) => inclusiveUsage(u, u.cacheRead ?? 0, null, 'inclusive')),
      );
      expect(calls[1]!.context_tokens! / calls[1]!.context_window!).toBe(0.8);
      expect(calls.map((c) => [c.finish_reason_raw, c.finish_class])).toEqual([
        ['stop', 'stop'],
        ['length', 'output_limit'],
      ]);
      expect(calls[1]!.max_output_tokens).toBe(4096);
    });
  });
}
