/**
 * End to end: OpenLLMetry / Traceloop `@traceloop/instrumentation-anthropic` 0.27 on the real
 * Anthropic SDK 0.137 (manuallyInstrument), OTLP/HTTP protobuf to a running rotscope, the fake
 * LLM as provider. This version's `gen_ai.usage.input_tokens` excludes the cache.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  callsOf,
  exclusiveUsage,
  partsOf,
  spansOf,
  toolsConversationParts,
  usageOf,
  type Harness,
  type ProducerRun,
} from '../../helpers/producers/e2e.ts';
import {
  ANTHROPIC_FINDING_USAGE,
  ANTHROPIC_MODEL,
  ANTHROPIC_TOOLS_USAGE,
  ANTHROPIC_WINDOW,
  READ_FILE_RESULT,
  RUN_TESTS_RESULT,
  SYSTEM_PROMPT,
} from '../../helpers/producers/script.ts';
import { FINDING_SESSION, TOOLS_SESSION } from '../../helpers/producers/traceloop-anthropic.ts';

let h: Harness;

/** The checks of this producer's row in test/e2e/producers.test.ts. */
export function traceloopAnthropicRows(ctx: ProducerRun<void>): void {
  beforeAll(() => {
    h = ctx.h;
  });

  describe('OpenLLMetry / Traceloop (@traceloop/instrumentation-anthropic 0.27 + @anthropic-ai/sdk 0.137)', () => {
    it('the real client hit the fake provider as scripted; only the Traceloop spans are kept', async () => {
      expect(h.llm.pending()).toBe(0);
      expect(h.llm.requests.map((r) => [r.endpoint, r.stream])).toEqual([
        ['messages', false],
        ['messages', true],
        ['messages', true],
        ['messages', false],
        ['messages', false],
      ]);
      const spans = await spansOf(h);
      expect(spans.map((s) => [s.name, s.role, s.scope_name])).toEqual(
        Array(5).fill([
          `chat ${ANTHROPIC_MODEL}`,
          'llm_call',
          '@traceloop/instrumentation-anthropic',
        ]),
      );
    });

    it('"tools": session_id is the conversation; cache-exclusive input is detected (raw < cache)', async () => {
      const calls = await callsOf(h, TOOLS_SESSION);
      expect(calls).toHaveLength(3);
      for (const c of calls) {
        expect(c).toMatchObject({
          conversation_synthetic: false,
          stream_key: `${TOOLS_SESSION}|main`,
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
        ANTHROPIC_TOOLS_USAGE.map((u) => exclusiveUsage(u, 'exclusive_inferred')),
      );
    });

    it('"tools": finish (none on streamed calls: the instrumentation drops message_delta), tool calls, parts', async () => {
      const calls = await callsOf(h, TOOLS_SESSION);
      expect(
        calls.map((c) => [
          c.finish_reason_raw,
          c.finish_class,
          c.output_tool_call,
          c.output_tool_name,
        ]),
      ).toEqual([
        ['tool_call', 'tool_call', true, 'read_file'],
        [null, null, true, 'run_tests'],
        [null, null, false, null],
      ]);
      expect(calls.map(partsOf)).toEqual(
        toolsConversationParts(
          SYSTEM_PROMPT.length,
          READ_FILE_RESULT.length,
          RUN_TESTS_RESULT.length,
        ),
      );
    });

    it('"finding": the second call sits at 80% of the 200k window and stopped on max_tokens (mapped to length)', async () => {
      const calls = await callsOf(h, FINDING_SESSION);
      expect(calls).toHaveLength(2);
      expect(calls.map(usageOf)).toEqual(
        ANTHROPIC_FINDING_USAGE.map((u) => exclusiveUsage(u, 'exclusive_inferred')),
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
