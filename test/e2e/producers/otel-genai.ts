/**
 * End to end: OTel GenAI semconv from `@opentelemetry/instrumentation-openai` 0.21 on the real
 * `openai` 6 client, exported over OTLP/HTTP protobuf to a running rotscope; the provider is
 * the fake LLM. What the instrumentation sends is in test/e2e/producers/README.md.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  callsOf,
  logCount,
  spansOf,
  usageOf,
  type CallRow,
  type Harness,
  type ProducerRun,
} from '../../helpers/producers/e2e.ts';
import {
  RESPONSES_CONVERSATION,
  RESPONSES_REPLIES,
  type OtelGenaiRun,
} from '../../helpers/producers/otel-genai.ts';
import {
  OPENAI_FINDING_USAGE,
  OPENAI_MODEL,
  OPENAI_TOOLS_USAGE,
  OPENAI_WINDOW,
  READ_FILE_RESULT,
  RUN_TESTS_RESULT,
  SYSTEM_PROMPT,
  contextOf,
} from '../../helpers/producers/script.ts';

let h: Harness;
let run: OtelGenaiRun;

/** This instrumentation sends prompt_tokens (inclusive of cache) and no cache attribute. */
function noCacheUsage(u: {
  fresh: number;
  cacheRead?: number;
  cacheWrite?: number;
  output: number;
}) {
  return {
    input_tokens_raw: contextOf(u),
    cache_read_tokens: null,
    cache_write_tokens: null,
    output_tokens: u.output,
    context_tokens: contextOf(u),
    usage_rule: 'no_cache',
  };
}

function common(c: CallRow) {
  return {
    producer: c.producer,
    provider: c.provider,
    request_model: c.request_model,
    response_model: c.response_model,
    context_window: c.context_window,
    window_source: c.window_source,
    agent_id: c.agent_id,
    side_call: c.side_call,
  };
}
const expectedCommon = {
  producer: 'semconv',
  provider: 'openai',
  request_model: OPENAI_MODEL,
  response_model: OPENAI_MODEL,
  context_window: OPENAI_WINDOW,
  window_source: 'catalog',
  agent_id: null,
  side_call: null,
};

/** The checks of this producer's row in test/e2e/producers.test.ts. */
export function otelGenaiRows(ctx: ProducerRun<OtelGenaiRun>): void {
  beforeAll(() => {
    h = ctx.h;
    run = ctx.result;
  });

  describe('OTel GenAI semconv (@opentelemetry/instrumentation-openai 0.21 + openai 6)', () => {
    it('the real client hit the fake provider as scripted (plain and streamed, usage chunk asked)', () => {
      expect(h.llm.pending()).toBe(0);
      expect(h.llm.requests.map((r) => [r.endpoint, r.stream])).toEqual([
        ['chat', false],
        ['chat', true],
        ['chat', true],
        ['chat', false],
        ['chat', true],
        ['responses', false],
        ['responses', true],
      ]);
      const streamed = h.llm.requests.filter((r) => r.endpoint === 'chat' && r.stream);
      for (const r of streamed) {
        expect((r.body as { stream_options?: unknown }).stream_options).toEqual({
          include_usage: true,
        });
      }
    });

    it('keeps the 7 LLM spans (application spans without GenAI interest are dropped) and the content logs', async () => {
      const spans = await spansOf(h);
      expect(spans.map((s) => [s.name, s.role])).toEqual(
        Array(7).fill(['chat gpt-4o', 'llm_call']),
      );
      expect(spans.map((s) => s.scope_name)).toEqual(
        Array(7).fill('@opentelemetry/instrumentation-openai'),
      );
      expect(await logCount(h)).toBeGreaterThan(0);
    });

    it('"tools": one conversation keyed by its trace (flagged synthetic), usage and finish of each call', async () => {
      const calls = await callsOf(h, run.toolsTraceId);
      expect(calls).toHaveLength(3);
      for (const c of calls) {
        expect(common(c)).toEqual(expectedCommon);
        expect(c.conversation_synthetic).toBe(true);
        expect(c.stream_key).toBe(`${run.toolsTraceId}|main`);
        expect(c.run_id).toBe(run.toolsTraceId);
      }
      expect(calls.map(usageOf)).toEqual(OPENAI_TOOLS_USAGE.map(noCacheUsage));
      expect(calls.map((c) => [c.finish_reason_raw, c.finish_class, c.output_tool_call])).toEqual([
        ['tool_calls', 'tool_call', true],
        ['tool_calls', 'tool_call', true],
        ['stop', 'stop', false],
      ]);
    });

    // This instrumentation sends message content only as log records (gen_ai.system.message /
    // gen_ai.tool.message / gen_ai.choice events, with the trace and span id of the call);
    // ingest joins them to the call, whichever arrives first.
    it('"tools": input parts from the content log records (system prompt, each tool result by name)', async () => {
      const calls = await callsOf(h, run.toolsTraceId);
      expect(
        calls.map(
          (c) => c.parts && { system: c.parts.system, tools: c.parts.tools, unit: c.parts.unit },
        ),
      ).toEqual([
        { system: SYSTEM_PROMPT.length, tools: {}, unit: 'chars' },
        {
          system: SYSTEM_PROMPT.length,
          tools: { read_file: READ_FILE_RESULT.length },
          unit: 'chars',
        },
        {
          system: SYSTEM_PROMPT.length,
          tools: { read_file: READ_FILE_RESULT.length, run_tests: RUN_TESTS_RESULT.length },
          unit: 'chars',
        },
      ]);
      // the tool called in each output comes from the gen_ai.choice log event
      expect(calls.map((c) => c.output_tool_name)).toEqual(['read_file', 'run_tests', null]);
    });

    it('"finding": the second call sits at 80% of gpt-4o\'s window and stopped on the output limit', async () => {
      const calls = await callsOf(h, run.findingTraceId);
      expect(calls).toHaveLength(2);
      expect(calls.map(usageOf)).toEqual(OPENAI_FINDING_USAGE.map(noCacheUsage));
      expect(calls[1]!.context_tokens! / calls[1]!.context_window!).toBe(0.8);
      expect(calls.map((c) => [c.finish_reason_raw, c.finish_class])).toEqual([
        ['stop', 'stop'],
        ['length', 'output_limit'],
      ]);
      expect(calls[1]!.max_output_tokens).toBe(4096);
    });

    it('"responses": gen_ai.conversation.id joins two traces; streamed usage comes from response.completed', async () => {
      const calls = await callsOf(h, RESPONSES_CONVERSATION);
      expect(calls).toHaveLength(2);
      expect(new Set(calls.map((c) => c.trace_id)).size).toBe(2);
      for (const c of calls) {
        expect(common(c)).toEqual(expectedCommon);
        expect(c.conversation_synthetic).toBe(false);
        expect(c.stream_key).toBe(`${RESPONSES_CONVERSATION}|main`);
        // a conversation can span runs: each run is its trace
        expect(c.run_id).toBe(c.trace_id);
      }
      expect(calls.map(usageOf)).toEqual(RESPONSES_REPLIES.map((r) => noCacheUsage(r.usage)));
      // the Responses path reports OTel finish values derived from the output items
      expect(calls.map((c) => [c.finish_reason_raw, c.finish_class, c.output_tool_call])).toEqual([
        ['tool_call', 'tool_call', true],
        ['stop', 'stop', false],
      ]);
      // system prompt from gen_ai.system_instructions on the span
      expect(calls.map((c) => c.parts?.system)).toEqual([
        SYSTEM_PROMPT.length,
        SYSTEM_PROMPT.length,
      ]);
    });
  });
}
