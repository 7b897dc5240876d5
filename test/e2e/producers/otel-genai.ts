/**
 * End to end: OTel GenAI semconv from `@opentelemetry/instrumentation-openai` 0.21 on the real
 * `openai` 6 client, exported over OTLP/HTTP protobuf to a running rotscope; the provider is
 * the fake LLM. What the instrumentation sends is in test/e2e/producers/README.md. The checks
 * every producer shares are the columns of test/e2e/producers.test.ts; this is what only this
 * row checks.
 */
import { describe, expect, it } from 'vitest';
import { callsOf, logCount, type ProducerRun } from '../../helpers/producers/e2e.ts';
import { RESPONSES_CONVERSATION, type OtelGenaiRun } from '../../helpers/producers/otel-genai.ts';
import { SYSTEM_PROMPT } from '../../helpers/producers/script.ts';

/** The checks only this producer's row in test/e2e/producers.test.ts has. */
export function otelGenaiRows(ctx: ProducerRun<OtelGenaiRun>): void {
  describe('OTel GenAI semconv (@opentelemetry/instrumentation-openai 0.21 + openai 6)', () => {
    it('the streamed chat completions asked for the usage chunk', () => {
      const streamed = ctx.h.llm.requests.filter((r) => r.endpoint === 'chat' && r.stream);
      expect(streamed).toHaveLength(3);
      for (const r of streamed) {
        expect((r.body as { stream_options?: unknown }).stream_options).toEqual({
          include_usage: true,
        });
      }
    });

    // This instrumentation sends message content only as log records (gen_ai.system.message /
    // gen_ai.tool.message / gen_ai.choice events, with the trace and span id of the call);
    // ingest joins them to the call, whichever arrives first.
    it('keeps the content log records', async () => {
      expect(await logCount(ctx.h)).toBeGreaterThan(0);
    });

    it('"responses": the system prompt from gen_ai.system_instructions on the span', async () => {
      const calls = await callsOf(ctx.h, RESPONSES_CONVERSATION);
      expect(calls.map((c) => c.parts?.system)).toEqual([
        SYSTEM_PROMPT.length,
        SYSTEM_PROMPT.length,
      ]);
    });
  });
}
