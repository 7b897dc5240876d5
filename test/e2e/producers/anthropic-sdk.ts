/**
 * End to end: the Anthropic TypeScript SDK 1.x's own spans (`anthropic.messages.create`),
 * emitted through the registered tracer provider, OTLP/HTTP protobuf to a running rotscope,
 * the fake LLM as provider.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  callsOf,
  inclusiveUsage,
  spansOf,
  usageOf,
  type Harness,
  type ProducerRun,
} from '../../helpers/producers/e2e.ts';
import { FINDING_CONVERSATION, TOOLS_CONVERSATION } from '../../helpers/producers/anthropic-sdk.ts';
import {
  ANTHROPIC_FINDING_USAGE,
  ANTHROPIC_MODEL,
  ANTHROPIC_TOOLS_USAGE,
  ANTHROPIC_WINDOW,
  READ_FILE_RESULT,
  RUN_TESTS_RESULT,
  SYSTEM_PROMPT,
} from '../../helpers/producers/script.ts';

let h: Harness;

/** The checks of this producer's row in test/e2e/producers.test.ts. */
export function anthropicSdkRows(ctx: ProducerRun<void>): void {
  beforeAll(() => {
    h = ctx.h;
  });

  describe('Anthropic TypeScript SDK 1.x own spans', () => {
    it('the SDK emitted one CLIENT span per API call once a tracer provider was registered', async () => {
      expect(h.llm.pending()).toBe(0);
      expect(h.llm.requests.map((r) => [r.endpoint, r.stream])).toEqual([
        ['messages', false],
        ['messages', true],
        ['messages', true],
        ['messages', false],
        ['messages', true],
      ]);
      const spans = await spansOf(h);
      expect(spans.map((s) => [s.name, s.role, s.scope_name])).toEqual(
        Array(5).fill(['anthropic.messages.create', 'llm_call', 'com.anthropic.sdk.typescript']),
      );
    });

    it('"tools": gen_ai.conversation.id from the request option; inclusive input with cache_write spelling', async () => {
      const calls = await callsOf(h, TOOLS_CONVERSATION);
      expect(calls).toHaveLength(3);
      for (const c of calls) {
        expect(c).toMatchObject({
          conversation_synthetic: false,
          stream_key: `${TOOLS_CONVERSATION}|main`,
          agent_id: null,
          side_call: null,
          producer: 'semconv',
          provider: 'anthropic',
          request_model: ANTHROPIC_MODEL,
          response_model: ANTHROPIC_MODEL,
          context_window: ANTHROPIC_WINDOW,
          window_source: 'catalog',
        });
      }
      expect(calls.map(usageOf)).toEqual(
        ANTHROPIC_TOOLS_USAGE.map((u) =>
          inclusiveUsage(u, u.cacheRead ?? 0, u.cacheWrite ?? 0, 'inclusive'),
        ),
      );
    });

    it('"tools": raw stop_reason (anthropic.message.stop_reason), tool calls, parts', async () => {
      const calls = await callsOf(h, TOOLS_CONVERSATION);
      // streamed spans carry no gen_ai.output.messages, so the tool's name is unknown there
      expect(
        calls.map((c) => [
          c.finish_reason_raw,
          c.finish_class,
          c.output_tool_call,
          c.output_tool_name,
        ]),
      ).toEqual([
        ['tool_use', 'tool_call', true, 'read_file'],
        ['tool_use', 'tool_call', true, null],
        ['end_turn', 'stop', false, null],
      ]);
      expect(
        calls.map(
          (c) =>
            c.parts && [c.parts.unit, c.parts.system, Object.keys(c.parts.tools), c.parts.source],
        ),
      ).toEqual([
        ['chars', SYSTEM_PROMPT.length, [], 'messages'],
        ['chars', SYSTEM_PROMPT.length, ['read_file'], 'messages'],
        ['chars', SYSTEM_PROMPT.length, ['read_file', 'run_tests'], 'messages'],
      ]);
    });

    // This SDK writes a tool result as Anthropic content blocks
    // (`response: [{"type":"text","text":"…"}]`): the text is measured (3000), not the JSON
    // of the blocks (3069).
    it('"tools": a tool result given as content blocks is sized as its text', async () => {
      const calls = await callsOf(h, TOOLS_CONVERSATION);
      expect(calls.map((c) => c.parts?.tools)).toEqual([
        {},
        { read_file: READ_FILE_RESULT.length },
        { read_file: READ_FILE_RESULT.length, run_tests: RUN_TESTS_RESULT.length },
      ]);
    });

    it('"finding": the second (streamed) call sits at 80% of the 200k window and stopped on max_tokens', async () => {
      const calls = await callsOf(h, FINDING_CONVERSATION);
      expect(calls).toHaveLength(2);
      expect(calls.map(usageOf)).toEqual(
        ANTHROPIC_FINDING_USAGE.map((u) =>
          inclusiveUsage(u, u.cacheRead ?? 0, u.cacheWrite ?? 0, 'inclusive'),
        ),
      );
      expect(calls[1]!.context_tokens! / calls[1]!.context_window!).toBe(0.8);
      expect(calls.map((c) => [c.finish_reason_raw, c.finish_class])).toEqual([
        ['end_turn', 'stop'],
        ['max_tokens', 'output_limit'],
      ]);
      expect(calls[1]!.max_output_tokens).toBe(4096);
    });
  });
}
