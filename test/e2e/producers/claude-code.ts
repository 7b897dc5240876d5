/**
 * End to end: Claude Code 2.1.x native telemetry — SIMULATED (see
 * test/helpers/producers/claude-code.ts: the binary cannot run here, so its documented span
 * and log-event shapes are emitted with the OTel SDK and the real OTLP exporters). Spans and
 * log events of one session are correlated by session id and request id.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  callsOf,
  compactionsOf,
  exclusiveUsage,
  logCount,
  spansOf,
  toolResultsOf,
  usageOf,
  type CallRow,
  type Harness,
  type ProducerRun,
} from '../../helpers/producers/e2e.ts';
import {
  COMPACTION,
  FINDING_CALLS,
  FINDING_SESSION,
  MODEL,
  READ_TOOL,
  SUBAGENT_ID,
  TASK_TOOL,
  TOOLS_CALLS,
  TOOLS_SESSION,
  type CcCall,
} from '../../helpers/producers/claude-code.ts';

let h: Harness;

function usage(call: CcCall) {
  return exclusiveUsage(
    {
      fresh: call.usage.input,
      cacheRead: call.usage.cacheRead,
      cacheWrite: call.usage.cacheCreation,
      output: call.usage.output,
    },
    'exclusive_producer',
  );
}

function byRequest(calls: CallRow[], call: CcCall): CallRow {
  const row = calls.find((c) => c.request_id === call.requestId);
  if (!row) throw new Error(`no call with request_id ${call.requestId}`);
  return row;
}

/** The checks of this producer's row in test/e2e/producers.test.ts. */
export function claudeCodeRows(ctx: ProducerRun<void>): void {
  beforeAll(() => {
    h = ctx.h;
  });

  describe('Claude Code 2.1.x telemetry (simulated from the docs)', () => {
    it('stores the spans with their roles and the log events', async () => {
      const spans = await spansOf(h);
      const roles = new Map<string, string[]>();
      for (const s of spans) roles.set(s.name, [...(roles.get(s.name) ?? []), s.role ?? 'none']);
      expect(Object.fromEntries(roles)).toEqual({
        'claude_code.interaction': Array(4).fill('agent_step'),
        'claude_code.llm_request': Array(8).fill('llm_call'),
        'claude_code.tool': Array(2).fill('tool'),
        'claude_code.tool.blocked_on_user': Array(2).fill('tool'),
        'claude_code.tool.execution': Array(2).fill('tool'),
      });
      // one trace per prompt: 2 prompts per session
      expect(new Set(spans.map((s) => s.trace_id)).size).toBe(4);
      // user_prompt ×4, api_request ×8, tool_result ×2, compaction ×1
      expect(await logCount(h)).toBe(15);
    });

    it("the session is the conversation and the run across its prompts' traces", async () => {
      const calls = await callsOf(h, TOOLS_SESSION);
      expect(calls).toHaveLength(5);
      expect(new Set(calls.map((c) => c.trace_id)).size).toBe(2);
      for (const c of calls) {
        expect(c).toMatchObject({
          conversation_synthetic: false,
          run_id: TOOLS_SESSION,
          producer: 'claude_code',
          provider: 'anthropic',
          request_model: MODEL,
          context_window: 200_000,
          window_source: 'catalog',
        });
      }
    });

    it('unprefixed input_tokens exclude the cache: context = input + cache read + cache creation', async () => {
      const calls = await callsOf(h, TOOLS_SESSION);
      const order = [
        TOOLS_CALLS.p1a,
        TOOLS_CALLS.p1b,
        TOOLS_CALLS.p2a,
        TOOLS_CALLS.sub,
        TOOLS_CALLS.p2b,
      ];
      expect(calls.map((c) => c.request_id)).toEqual(order.map((c) => c.requestId));
      expect(calls.map(usageOf)).toEqual(order.map(usage));
      expect(calls.map((c) => [c.finish_reason_raw, c.finish_class, c.output_tool_call])).toEqual([
        ['tool_use', 'tool_call', true],
        ['end_turn', 'stop', false],
        ['tool_use', 'tool_call', true],
        ['end_turn', 'stop', false],
        ['end_turn', 'stop', false],
      ]);
    });

    it('the sub-agent (agent_id, under the Task tool span) is its own stream and not a side call', async () => {
      const calls = await callsOf(h, TOOLS_SESSION);
      const sub = byRequest(calls, TOOLS_CALLS.sub);
      expect(sub).toMatchObject({
        agent_id: SUBAGENT_ID,
        stream_key: `${TOOLS_SESSION}|${SUBAGENT_ID}`,
        side_call: null,
      });
      const spans = await spansOf(h);
      const parent = spans.find((s) => s.span_id === sub.parent_span_id);
      expect(parent?.name).toBe('claude_code.tool');
      expect(parent?.attributes['tool_use_id']).toBe(TASK_TOOL.toolUseId);
      for (const main of [TOOLS_CALLS.p1a, TOOLS_CALLS.p1b, TOOLS_CALLS.p2a, TOOLS_CALLS.p2b]) {
        expect(byRequest(calls, main)).toMatchObject({
          agent_id: null,
          stream_key: `${TOOLS_SESSION}|main`,
          side_call: null,
        });
      }
    });

    it('tool results from the tool spans (result_tokens) and the tool_result events (bytes); parts in tokens', async () => {
      const rows = await toolResultsOf(h, TOOLS_SESSION);
      const seen = rows
        .map(
          (r) => [r.tool_name, r.tool_call_id, r.result_size, r.size_unit, r.stream_key] as const,
        )
        .sort((a, b) => `${a[1]}${a[3]}`.localeCompare(`${b[1]}${b[3]}`));
      const main = `${TOOLS_SESSION}|main`;
      expect(seen).toEqual([
        [READ_TOOL.name, READ_TOOL.toolUseId, READ_TOOL.resultBytes, 'bytes', main],
        [READ_TOOL.name, READ_TOOL.toolUseId, READ_TOOL.resultTokens, 'tokens', main],
        [TASK_TOOL.name, TASK_TOOL.toolUseId, TASK_TOOL.resultBytes, 'bytes', main],
        [TASK_TOOL.name, TASK_TOOL.toolUseId, TASK_TOOL.resultTokens, 'tokens', main],
      ]);
      const calls = await callsOf(h, TOOLS_SESSION);
      expect(byRequest(calls, TOOLS_CALLS.p1a).parts).toBeNull();
      expect(byRequest(calls, TOOLS_CALLS.p1b).parts).toEqual({
        unit: 'tokens',
        total: null,
        system: null,
        tools: { [READ_TOOL.name]: READ_TOOL.resultTokens },
        source: 'tool_spans',
      });
      expect(byRequest(calls, TOOLS_CALLS.p2b).parts).toMatchObject({
        unit: 'tokens',
        tools: { [TASK_TOOL.name]: TASK_TOOL.resultTokens },
        source: 'tool_spans',
      });
    });

    it('"finding": a call at 80% of the window, a compaction (side call + event), then a max_tokens stop', async () => {
      const calls = await callsOf(h, FINDING_SESSION);
      expect(calls.map((c) => c.request_id)).toEqual([
        FINDING_CALLS.full.requestId,
        FINDING_CALLS.compact.requestId,
        FINDING_CALLS.cut.requestId,
      ]);
      expect(calls.map(usageOf)).toEqual(
        [FINDING_CALLS.full, FINDING_CALLS.compact, FINDING_CALLS.cut].map(usage),
      );
      expect(calls[0]!.context_tokens! / calls[0]!.context_window!).toBeGreaterThanOrEqual(0.8);
      // the summarizer call is known as such only from its api_request event (query_source=compact)
      expect(
        calls.map((c) => [c.side_call, c.stream_key, c.finish_reason_raw, c.finish_class]),
      ).toEqual([
        [null, `${FINDING_SESSION}|main`, 'end_turn', 'stop'],
        ['compact', `${FINDING_SESSION}|main`, 'end_turn', 'stop'],
        [null, `${FINDING_SESSION}|main`, 'max_tokens', 'output_limit'],
      ]);

      const compactions = await compactionsOf(h, FINDING_SESSION);
      expect(
        compactions.map((c) => [
          c.evidence,
          c.kind,
          c.trigger,
          c.tokens_before,
          c.tokens_after,
          c.stream_key,
          c.run_id,
        ]),
      ).toEqual([
        // one compaction, once: the summarising `compact` call is a side call, not a second one
        [
          'claude_code_event',
          'summarize',
          COMPACTION.trigger,
          COMPACTION.preTokens,
          COMPACTION.postTokens,
          `${FINDING_SESSION}|main`,
          FINDING_SESSION,
        ],
      ]);
      expect(await compactionsOf(h, TOOLS_SESSION)).toEqual([]);
    });
  });
}
