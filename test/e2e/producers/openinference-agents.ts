/**
 * End to end: OpenInference through the OpenAI Agents SDK (`@openai/agents` 0.14 on `openai`
 * 6, Node 20): the agent's Responses calls are traced by
 * `@arizeai/openinference-instrumentation-openai` 4.2; the runner executes the tools itself.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  callsOf,
  inclusiveUsage,
  partsOf,
  spansOf,
  toolsConversationParts,
  usageOf,
  type Harness,
  type ProducerRun,
} from '../../helpers/producers/e2e.ts';
import { AGENT_SESSION } from '../../helpers/producers/openinference-agents.ts';
import {
  FINAL_ANSWER,
  OPENAI_MODEL,
  OPENAI_TOOLS_USAGE,
  OPENAI_WINDOW,
  READ_FILE_RESULT,
  RUN_TESTS_RESULT,
  SYSTEM_PROMPT,
} from '../../helpers/producers/script.ts';

let h: Harness;
let finalOutput: string;

/** The checks of this producer's row in test/e2e/producers.test.ts. */
export function openInferenceAgentsRows(ctx: ProducerRun<{ finalOutput: string }>): void {
  beforeAll(() => {
    h = ctx.h;
    ({ finalOutput } = ctx.result);
  });

  describe('OpenInference via @openai/agents 0.14 (Responses API)', () => {
    it('the agent ran its tools against the fake provider and answered', async () => {
      expect(finalOutput).toBe(FINAL_ANSWER);
      expect(h.llm.pending()).toBe(0);
      expect(h.llm.requests.map((r) => r.endpoint)).toEqual([
        'responses',
        'responses',
        'responses',
      ]);
      const spans = await spansOf(h);
      // the Agents SDK's own tracing goes to the OpenAI platform, not OTel: only the LLM spans
      expect(spans.map((s) => [s.name, s.role])).toEqual(
        Array(3).fill(['OpenAI Responses', 'llm_call']),
      );
    });

    it('session.id is the conversation; usage with cache reads (inclusive) on every call', async () => {
      const calls = await callsOf(h, AGENT_SESSION);
      expect(calls).toHaveLength(3);
      for (const c of calls) {
        expect(c).toMatchObject({
          conversation_synthetic: false,
          stream_key: `${AGENT_SESSION}|main`,
          agent_id: null,
          side_call: null,
          producer: 'openinference',
          provider: 'openai',
          request_model: OPENAI_MODEL,
          context_window: OPENAI_WINDOW,
          window_source: 'catalog',
        });
      }
      expect(calls.map(usageOf)).toEqual(
        OPENAI_TOOLS_USAGE.map((u) => inclusiveUsage(u, u.cacheRead ?? 0, null, 'inclusive')),
      );
    });

    it('no finish reason on Responses spans; tool calls and parts from the flattened messages', async () => {
      const calls = await callsOf(h, AGENT_SESSION);
      expect(
        calls.map((c) => [
          c.finish_reason_raw,
          c.finish_class,
          c.output_tool_call,
          c.output_tool_name,
        ]),
      ).toEqual([
        [null, null, true, 'read_file'],
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
  });
}
