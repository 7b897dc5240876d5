/**
 * End to end: OpenInference through the OpenAI Agents SDK (`@openai/agents` 0.14 on `openai`
 * 6, Node 20): the agent's Responses calls are traced by
 * `@arizeai/openinference-instrumentation-openai` 4.2; the runner executes the tools itself.
 * The checks every producer shares are the columns of test/e2e/producers.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { ProducerRun } from '../../helpers/producers/e2e.ts';
import { FINAL_ANSWER } from '../../helpers/producers/script.ts';

/** The checks only this producer's row in test/e2e/producers.test.ts has. */
export function openInferenceAgentsRows(ctx: ProducerRun<{ finalOutput: string }>): void {
  describe('OpenInference via @openai/agents 0.14 (Responses API)', () => {
    it('the agent ran its tools and answered', () => {
      expect(ctx.result.finalOutput).toBe(FINAL_ANSWER);
    });
  });
}
