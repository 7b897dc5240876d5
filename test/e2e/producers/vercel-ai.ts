/**
 * End to end: Vercel AI SDK 6 (`ai` 6.0, `@ai-sdk/openai` 3.0, `@ai-sdk/anthropic` 3.0) with
 * `experimental_telemetry`, OTLP/HTTP JSON to a running rotscope, the fake LLM as provider.
 * Multi-step tool calling: the `ai.generateText` / `ai.streamText` roots repeat their steps'
 * usage and must not count as calls. The checks every producer shares are the columns of
 * test/e2e/producers.test.ts; this is what only this row checks.
 */
import { describe, expect, it } from 'vitest';
import { callsOf, toolResultsOf, type ProducerRun } from '../../helpers/producers/e2e.ts';
import { ANTHROPIC_SESSION, TOOLS_SESSION } from '../../helpers/producers/vercel-ai.ts';

/** The checks only this producer's row in test/e2e/producers.test.ts has. */
export function vercelAiRows(ctx: ProducerRun<void>): void {
  describe('Vercel AI SDK 6 (ai.* spans, experimental_telemetry)', () => {
    it('8 provider calls, not 12: the roots repeated usage is not a call', async () => {
      expect(await callsOf(ctx.h)).toHaveLength(8);
    });

    // `ai.toolCall.result` is the JSON of the tool's output (here a JSON string); its size is
    // the decoded output's (the "tool results" column)
    it('tool results from ai.toolCall spans, by name and call id', async () => {
      const rows = await toolResultsOf(ctx.h);
      expect(
        rows.map((r) => [r.conversation_id, r.tool_name, r.tool_call_id, r.size_unit, r.source]),
      ).toEqual([
        [TOOLS_SESSION, 'read_file', 'call_read_1', 'chars', 'tool_span'],
        [TOOLS_SESSION, 'run_tests', 'call_test_1', 'chars', 'tool_span'],
        [ANTHROPIC_SESSION, 'read_file', 'toolu_read_1', 'chars', 'tool_span'],
        [ANTHROPIC_SESSION, 'run_tests', 'toolu_test_1', 'chars', 'tool_span'],
      ]);
    });
  });
}
