/**
 * End to end: LangChain.js (`@langchain/core` 1.4, `@langchain/openai` 1.5.8) traced by
 * `@arizeai/openinference-instrumentation-langchain` 4.1, OTLP/HTTP protobuf to a running
 * rotscope, the fake LLM as provider. The checks every producer shares are the columns of
 * test/e2e/producers.test.ts; this is what only this row checks.
 */
import { describe, expect, it } from 'vitest';
import type { ProducerRun } from '../../helpers/producers/e2e.ts';

/** The checks only this producer's row in test/e2e/producers.test.ts has. */
export function langchainOpenInferenceRows(ctx: ProducerRun<void>): void {
  describe('LangChain.js 1.4 + @langchain/openai 1.5.8, traced by OpenInference 4.1.1', () => {
    it('/api/coverage: the producer breakdown sees every call and no blind detector', async () => {
      const coverage = await fetch(`${ctx.h.server.url}/api/coverage`);
      expect(await coverage.json()).toMatchObject({
        producers: [{ producer: 'openinference', calls: 10, blind: [] }],
      });
    });
  });
}
