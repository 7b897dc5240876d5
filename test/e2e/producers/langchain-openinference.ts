/**
 * End to end: LangChain.js (`@langchain/core` 1.4, `@langchain/openai` 1.5.8) traced by
 * `@arizeai/openinference-instrumentation-langchain` 4.1, OTLP/HTTP protobuf to a running
 * rotscope, the fake LLM as provider.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  callsOf,
  spansOf,
  toolResultsOf,
  type Harness,
  type ProducerRun,
} from '../../helpers/producers/e2e.ts';
import { LOOP_SESSION } from '../../helpers/producers/langchain-openinference.ts';
import { LOOP_USAGE } from '../../helpers/producers/loop-script.ts';
import { OPENAI_MODEL, READ_FILE_RESULT } from '../../helpers/producers/script.ts';

let h: Harness;

/** The checks of this producer's row in test/e2e/producers.test.ts. */
export function langchainOpenInferenceRows(ctx: ProducerRun<void>): void {
  beforeAll(() => {
    h = ctx.h;
  });

  describe('LangChain.js 1.4 + @langchain/openai 1.5.8, traced by OpenInference 4.1.1', () => {
    it('the real model hit the fake provider as scripted (calls 5–8 and finding 2 streamed)', async () => {
      expect(h.llm.pending()).toBe(0);
      expect(h.llm.requests.map((r) => [r.endpoint, r.stream])).toEqual([
        ...Array(4).fill(['chat', false]),
        ...Array(4).fill(['chat', true]),
        ['chat', false],
        ['chat', true],
      ]);
      const spans = await spansOf(h);
      expect(spans.filter((s) => s.role === 'llm_call').map((s) => s.name)).toEqual(
        Array(10).fill('ChatOpenAI'),
      );
    });

    it('"loop": tokens on every call, streamed ones included; finish reasons raw', async () => {
      const calls = await callsOf(h, LOOP_SESSION);
      expect(calls).toHaveLength(8);
      for (const c of calls)
        expect(c).toMatchObject({ producer: 'openinference', request_model: OPENAI_MODEL });
      expect(calls.map((c) => c.context_tokens)).toEqual(
        LOOP_USAGE.map((u) => u.fresh + (u.cacheRead ?? 0)),
      );
      expect(calls.map((c) => [c.finish_reason_raw, c.output_tool_call])).toEqual([
        ['tool_calls', true],
        ['tool_calls', true],
        ['tool_calls', true],
        ['stop', false],
        ['length', false],
        ['length', true],
        ['tool_calls', true],
        ['stop', false],
      ]);
    });

    it('"loop": tool results in the flattened messages (no call ids) named by message order', async () => {
      const calls = await callsOf(h, LOOP_SESSION);
      expect(calls.map((c) => c.parts?.tools.read_file ?? 0)).toEqual([
        0,
        ...Array(5).fill(READ_FILE_RESULT.length),
        0,
        0,
      ]);
      expect(calls.every((c) => !('unknown' in (c.parts?.tools ?? {})))).toBe(true);
      const results = await toolResultsOf(h, LOOP_SESSION);
      expect(results.map((t) => t.tool_name)).toEqual([
        'read_file',
        'list_dir',
        'git_log',
        'write_file',
        'write_file',
      ]);
    });
  });
}
