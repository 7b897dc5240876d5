/**
 * End to end: OpenLLMetry / Traceloop `@traceloop/instrumentation-openai` 0.27 on the real
 * `openai` 6 client, OTLP/HTTP protobuf to a running rotscope, the fake LLM as provider.
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
import {
  OPENAI_FINDING_USAGE,
  OPENAI_MODEL,
  OPENAI_TOOLS_USAGE,
  OPENAI_WINDOW,
  READ_FILE_RESULT,
  RUN_TESTS_RESULT,
  SYSTEM_PROMPT,
} from '../../helpers/producers/script.ts';
import { FINDING_SESSION, TOOLS_SESSION } from '../../helpers/producers/traceloop-openai.ts';

let h: Harness;

/** The checks of this producer's row in test/e2e/producers.test.ts. */
export function traceloopOpenaiRows(ctx: ProducerRun<void>): void {
  beforeAll(() => {
    h = ctx.h;
  });

  describe('OpenLLMetry / Traceloop (@traceloop/instrumentation-openai 0.27 + openai 6)', () => {
    it('the real client hit the fake provider as scripted', async () => {
      expect(h.llm.pending()).toBe(0);
      expect(h.llm.requests.map((r) => [r.endpoint, r.stream])).toEqual([
        ['chat', false],
        ['chat', true],
        ['chat', true],
        ['chat', false],
        ['chat', false],
      ]);
      const spans = await spansOf(h);
      expect(spans.map((s) => [s.name, s.role])).toEqual(
        Array(5).fill(['chat gpt-4o', 'llm_call']),
      );
    });

    it('"tools": the association property session_id is the conversation; each call is its own run', async () => {
      const calls = await callsOf(h, TOOLS_SESSION);
      expect(calls).toHaveLength(3);
      for (const c of calls) {
        expect(c).toMatchObject({
          conversation_synthetic: false,
          stream_key: `${TOOLS_SESSION}|main`,
          agent_id: null,
          side_call: null,
          producer: 'semconv',
          provider: 'openai',
          request_model: OPENAI_MODEL,
          response_model: OPENAI_MODEL,
          context_window: OPENAI_WINDOW,
          window_source: 'catalog',
        });
        expect(c.run_id).toBe(c.trace_id);
      }
      expect(new Set(calls.map((c) => c.trace_id)).size).toBe(3);
    });

    it('"tools": usage of the plain call; the streamed calls carry none (the instrumentation drops the usage chunk)', async () => {
      const calls = await callsOf(h, TOOLS_SESSION);
      expect(calls.map(usageOf)).toEqual([
        inclusiveUsage(OPENAI_TOOLS_USAGE[0], null, null, 'no_cache'),
        NO_USAGE,
        NO_USAGE,
      ]);
    });

    it('"tools": finish classes, output tool calls and input parts from gen_ai.input.messages', async () => {
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
        ['tool_call', 'tool_call', true, 'run_tests'],
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

    it('"finding": the second call sits at 80% of the window and stopped on the output limit', async () => {
      const calls = await callsOf(h, FINDING_SESSION);
      expect(calls).toHaveLength(2);
      expect(calls.map(usageOf)).toEqual(
        OPENAI_FINDING_USAGE.map((u) => inclusiveUsage(u, null, null, 'no_cache')),
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
