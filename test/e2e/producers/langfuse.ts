/**
 * End to end: the Langfuse JS SDK 5.11 (`LangfuseSpanProcessor` exporting to rotscope,
 * `observeOpenAI` on the real `openai` 6 client, tools as Langfuse tool observations), OTLP/HTTP
 * protobuf to a running rotscope, the fake LLM as provider. The checks every producer shares
 * are the columns of test/e2e/producers.test.ts; this is what only this row checks.
 */
import { describe, expect, it } from 'vitest';
import { spansOf, type ProducerRun } from '../../helpers/producers/e2e.ts';

interface CoverageBody {
  calls: number;
  detectors: Record<string, { covered: number; share: number; needs: string }>;
  producers: Array<{
    producer: string;
    calls: number;
    covered: Record<string, number>;
    blind: string[];
  }>;
}

/** The checks only this producer's row in test/e2e/producers.test.ts has. */
export function langfuseRows(ctx: ProducerRun<void>): void {
  describe('Langfuse (@langfuse/otel + @langfuse/tracing + @langfuse/openai 5.11.1)', () => {
    it('tool observations in call order; no span carries gen_ai.operation.name', async () => {
      const spans = await spansOf(ctx.h);
      expect(spans.filter((s) => s.role === 'tool').map((s) => s.name)).toEqual([
        'read_file',
        'list_dir',
        'git_log',
        'write_file',
        'write_file',
      ]);
      expect(spans.every((s) => s.attributes['gen_ai.operation.name'] === undefined)).toBe(true);
    });

    it('/api/coverage: output_cut_off blind (no finish reasons), the other detectors see every call', async () => {
      const res = await fetch(`${ctx.h.server.url}/api/coverage`);
      const body = (await res.json()) as CoverageBody;
      expect(body.calls).toBe(10);
      expect(
        Object.fromEntries(Object.entries(body.detectors).map(([k, d]) => [k, d.covered])),
      ).toEqual({ context_too_full: 10, tool_takeover: 10, history_lost: 10, output_cut_off: 0 });
      // the producer breakdown names the blind detector
      expect(body.producers).toEqual([
        {
          producer: 'langfuse',
          calls: 10,
          covered: { context_too_full: 10, tool_takeover: 10, history_lost: 10, output_cut_off: 0 },
          blind: ['output_cut_off'],
          // a library, not a coding agent: the generic advice, which names the attributes
          agent: null,
          hints: { output_cut_off: 'send gen_ai.response.finish_reasons on every chat span' },
        },
      ]);
    });
  });
}
