/**
 * End to end: OpenInference `@arizeai/openinference-instrumentation-openai` 4.2 on the real
 * `openai` 6 client (manuallyInstrument on the ES module), OTLP/HTTP protobuf to a running
 * rotscope, the fake LLM as provider. The checks every producer shares are the columns of
 * test/e2e/producers.test.ts; this is what only this row checks.
 */
import { describe, expect, it } from 'vitest';
import { spansOf, type ProducerRun } from '../../helpers/producers/e2e.ts';

/** The checks only this producer's row in test/e2e/producers.test.ts has. */
export function openInferenceRows(ctx: ProducerRun<void>): void {
  describe('OpenInference (@arizeai/openinference-instrumentation-openai 4.2 + openai 6, chat completions)', () => {
    it('the kept spans are the LLM-kind ones (openinference.span.kind)', async () => {
      const spans = await spansOf(ctx.h);
      expect(spans.map((s) => s.attributes['openinference.span.kind'])).toEqual(
        Array(5).fill('LLM'),
      );
    });
  });
}
