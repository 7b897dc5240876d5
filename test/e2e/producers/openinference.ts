/**
 * End to end: OpenInference `@arizeai/openinference-instrumentation-openai` 4.2 on the real
 * `openai` 6 client (manuallyInstrument on the ES module), OTLP/HTTP protobuf to a running
 * rotscope, the fake LLM as provider.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  NO_USAGE,
  callsOf,
  inclusiveUsage,
  partsOf,
  spansOf,
  toolsConversationParts,
  usageOf,
  type Harness,
  type ProducerRun,
} from '../../helpers/producers/e2e.ts';
import { FINDING_SESSION, TOOLS_SESSION } from '../../helpers/producers/openinference.ts';
import {
  OPENAI_FINDING_USAGE,
  OPENAI_MODEL,
  OPENAI_TOOLS_USAGE,
  OPENAI_WINDOW,
  READ_FILE_RESULT,
  RUN_TESTS_RESULT,
  SYSTEM_PROMPT,
} from '../../helpers/producers/script.ts';

let h: Harness;

/** The checks of this producer's row in test/e2e/producers.test.ts. */
export function openInferenceRows(ctx: ProducerRun<void>): void {
  beforeAll(() => {
    h = ctx.h;
  });

  describe('OpenInference (@arizeai/openinference-instrumentation-openai 4.2 + openai 6, chat completions)', () => {
    it('the real client hit the fake provider as scripted; LLM-kind spans kept', async () => {
      expect(h.llm.pending()).toBe(0);
      expect(h.llm.requests.map((r) => [r.endpoint, r.stream])).toEqual([
        ['chat', false],
        ['chat', true],
        ['chat', true],
        ['chat', false],
        ['chat', false],
      ]);
      const spans = await spansOf(h);
      expect(spans.map((s) => [s.name, s.role, s.attributes['openinference.span.kind']])).toEqual(
        Array(5).fill(['OpenAI Chat Completions', 'llm_call', 'LLM']),
      );
    });

    it('"tools": session.id is the conversation; usage of the plain call (cache read 0 → inclusive), none when streamed', async () => {
      const calls = await callsOf(h, TOOLS_SESSION);
      expect(calls).toHaveLength(3);
      for (const c of calls) {
        expect(c).toMatchObject({
          conversation_synthetic: false,
          stream_key: `${TOOLS_SESSION}|main`,
          agent_id: null,
          side_call: null,
          producer: 'openinference',
          provider: 'openai',
          request_model: OPENAI_MODEL,
          response_model: OPENAI_MODEL,
          context_window: OPENAI_WINDOW,
          window_source: 'catalog',
        });
        expect(c.run_id).toBe(c.trace_id);
      }
      expect(calls.map(usageOf)).toEqual([
        inclusiveUsage(OPENAI_TOOLS_USAGE[0], 0, null, 'inclusive'),
        NO_USAGE,
        NO_USAGE,
      ]);
    });

    it('"tools": raw finish reasons (llm.finish_reason), output tool calls, parts from llm.input_messages', async () => {
      const calls = await callsOf(h, TOOLS_SESSION);
      expect(
        calls.map((c) => [
          c.finish_reason_raw,
          c.finish_class,
          c.output_tool_call,
          c.output_tool_name,
        ]),
      ).toEqual([
        ['tool_calls', 'tool_call', true, 'read_file'],
        ['tool_calls', 'tool_call', true, 'run_tests'],
        ['stop', 'stop', false, null],
      ]);
      expect(calls.map(partsOf)).toEqual(
        toolsConversationParts(
          SYSTEM_PROMPT.length,
          READ_FILE_RESULT.length,
          RUN_TESTS_RESULT.length,
        ),
      );
    });

    it('"finding": cache reads reported, the second call at 80% of the window stopped on length', async () => {
      const calls = await callsOf(h, FINDING_SESSION);
      expect(calls).toHaveLength(2);
      expect(calls.map(usageOf)).toEqual(
        OPENAI_FINDING_USAGE.map((u) => inclusiveUsage(u, u.cacheRead ?? 0, null, 'inclusive')),
      );
      expect(calls[1]!.context_tokens! / calls[1]!.context_window!).toBe(0.8);
      expect(calls.map((c) => [c.finish_reason_raw, c.finish_class])).toEqual([
        ['stop', 'stop'],
        ['length', 'output_limit'],
      ]);
    });
  });
}
