/**
 * End to end: the Langfuse JS SDK 5.11 (`LangfuseSpanProcessor` exporting to rotscope,
 * `observeOpenAI` on the real `openai` 6 client, tools as Langfuse tool observations), OTLP/HTTP
 * protobuf to a running rotscope, the fake LLM as provider.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  callsOf,
  spansOf,
  toolResultsOf,
  type Harness,
  type ProducerRun,
} from '../../helpers/producers/e2e.ts';
import { FINDING_SESSION, LOOP_SESSION } from '../../helpers/producers/langfuse.ts';
import { LOOP_USAGE } from '../../helpers/producers/loop-script.ts';
import {
  OPENAI_FINDING_USAGE,
  OPENAI_MODEL,
  OPENAI_WINDOW,
  READ_FILE_RESULT,
} from '../../helpers/producers/script.ts';

let h: Harness;

interface CoverageBody {
  calls: number;
  detectors: Record<string, { covered: number; share: number; needs: string }>;
}

/** The checks of this producer's row in test/e2e/producers.test.ts. */
export function langfuseRows(ctx: ProducerRun<void>): void {
  beforeAll(() => {
    h = ctx.h;
  });

  describe('Langfuse (@langfuse/otel + @langfuse/tracing + @langfuse/openai 5.11.1)', () => {
    it('the real client hit the fake provider as scripted; generations and tools kept by langfuse.observation.type', async () => {
      expect(h.llm.pending()).toBe(0);
      expect(h.llm.requests.map((r) => r.endpoint)).toEqual(Array(10).fill('chat'));
      const spans = await spansOf(h);
      expect(spans.filter((s) => s.role === 'llm_call')).toHaveLength(10);
      expect(spans.filter((s) => s.role === 'tool').map((s) => s.name)).toEqual([
        'read_file',
        'list_dir',
        'git_log',
        'write_file',
        'write_file',
      ]);
      expect(spans.every((s) => s.attributes['gen_ai.operation.name'] === undefined)).toBe(true);
    });

    it('"loop": session.id is the conversation; usage_details input + cached = the context; model from model.name', async () => {
      const calls = await callsOf(h, LOOP_SESSION);
      expect(calls).toHaveLength(8);
      for (const c of calls) {
        expect(c).toMatchObject({
          conversation_synthetic: false,
          producer: 'langfuse',
          request_model: OPENAI_MODEL,
          context_window: OPENAI_WINDOW,
          usage_rule: 'exclusive_producer',
          finish_reason_raw: null,
        });
      }
      expect(calls.map((c) => [c.input_tokens_raw, c.cache_read_tokens, c.context_tokens])).toEqual(
        LOOP_USAGE.map((u) => [u.fresh, u.cacheRead ?? 0, u.fresh + (u.cacheRead ?? 0)]),
      );
    });

    it('"loop": tool results named from the request messages (by call id), and by the tool observations', async () => {
      const calls = await callsOf(h, LOOP_SESSION);
      expect(calls.map((c) => c.parts?.tools.read_file ?? 0)).toEqual([
        0,
        READ_FILE_RESULT.length,
        READ_FILE_RESULT.length,
        READ_FILE_RESULT.length,
        READ_FILE_RESULT.length,
        READ_FILE_RESULT.length,
        0,
        0,
      ]);
      expect(calls.every((c) => !('unknown' in (c.parts?.tools ?? {})))).toBe(true);
      const results = await toolResultsOf(h, LOOP_SESSION);
      expect(results.map((t) => [t.tool_name, t.result_size])).toEqual([
        ['read_file', READ_FILE_RESULT.length],
        ['list_dir', 120],
        ['git_log', 150],
        ['write_file', 2],
        ['write_file', 2],
      ]);
    });

    it('"finding": the streamed call at 80% of the window; its cut is invisible (no finish reason)', async () => {
      const calls = await callsOf(h, FINDING_SESSION);
      expect(calls.map((c) => c.context_tokens)).toEqual(
        OPENAI_FINDING_USAGE.map((u) => u.fresh + (u.cacheRead ?? 0)),
      );
      expect(calls.map((c) => [c.finish_reason_raw, c.output_tokens])).toEqual([
        [null, 500],
        [null, 4096],
      ]);
    });

    it('/api/coverage: output_cut_off blind (no finish reasons), the other detectors see every call', async () => {
      const res = await fetch(`${h.server.url}/api/coverage`);
      const body = (await res.json()) as CoverageBody;
      expect(body.calls).toBe(10);
      expect(
        Object.fromEntries(Object.entries(body.detectors).map(([k, d]) => [k, d.covered])),
      ).toEqual({ context_too_full: 10, tool_takeover: 6, history_lost: 10, output_cut_off: 0 });
    });
  });
}
