/**
 * End to end: Claude Code 2.1.x native telemetry — SIMULATED (see
 * test/helpers/producers/claude-code.ts: the binary cannot run here, so its documented span
 * and log-event shapes are emitted with the OTel SDK and the real OTLP exporters). Spans and
 * log events of one session are correlated by session id and request id.
 */
import { describe, expect, it } from 'vitest';
import { countOf } from '../../../src/store/columns.ts';
import {
  callsOf,
  compactionsOf,
  logCount,
  spansOf,
  toolResultsOf,
  type CallRow,
  type ProducerRun,
} from '../../helpers/producers/e2e.ts';
import {
  COMPACTION,
  FINDING_CALLS,
  FINDING_SESSION,
  READ_TOOL,
  SUBAGENT_ID,
  TASK_TOOL,
  TOOLS_CALLS,
  TOOLS_SESSION,
  type CcCall,
} from '../../helpers/producers/claude-code.ts';

function byRequest(calls: CallRow[], call: CcCall): CallRow {
  const row = calls.find((c) => c.request_id === call.requestId);
  if (!row) throw new Error(`no call with request_id ${call.requestId}`);
  return row;
}

/** The checks only this producer's row in test/e2e/producers.test.ts has. */
export function claudeCodeRows(ctx: ProducerRun<void>): void {
  describe('Claude Code 2.1.x telemetry (simulated from the docs)', () => {
    it('one trace per prompt and the log events', async () => {
      const spans = await spansOf(ctx.h);
      // one trace per prompt: 2 prompts per session
      expect(new Set(spans.map((s) => s.trace_id)).size).toBe(4);
      // user_prompt ×4, api_request ×8, tool_result ×2, compaction ×1
      expect(await logCount(ctx.h)).toBe(15);
    });

    it('the calls of "tools" are stored in request order (the usage column follows it)', async () => {
      const calls = await callsOf(ctx.h, TOOLS_SESSION);
      const order = [
        TOOLS_CALLS.p1a,
        TOOLS_CALLS.p1b,
        TOOLS_CALLS.p2a,
        TOOLS_CALLS.sub,
        TOOLS_CALLS.p2b,
      ];
      expect(calls.map((c) => c.request_id)).toEqual(order.map((c) => c.requestId));
    });

    it('the sub-agent (agent_id, under the Task tool span) is its own stream and not a side call', async () => {
      const calls = await callsOf(ctx.h, TOOLS_SESSION);
      const sub = byRequest(calls, TOOLS_CALLS.sub);
      expect(sub).toMatchObject({
        agent_id: SUBAGENT_ID,
        stream_key: `${TOOLS_SESSION}|${SUBAGENT_ID}`,
        side_call: null,
      });
      const spans = await spansOf(ctx.h);
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
      const rows = await toolResultsOf(ctx.h, TOOLS_SESSION);
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
      const calls = await callsOf(ctx.h, TOOLS_SESSION);
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

    it('"finding": the compaction is one side call (by its api_request event) and one compaction', async () => {
      const calls = await callsOf(ctx.h, FINDING_SESSION);
      expect(calls.map((c) => c.request_id)).toEqual([
        FINDING_CALLS.full.requestId,
        FINDING_CALLS.compact.requestId,
        FINDING_CALLS.cut.requestId,
      ]);
      // the summarizer call is known as such only from its api_request event (query_source=compact)
      expect(calls.map((c) => c.side_call)).toEqual([null, 'compact', null]);

      const compactions = await compactionsOf(ctx.h, FINDING_SESSION);
      expect(
        compactions.map((c) => [
          c.evidence,
          c.kind,
          c.trigger,
          countOf(c.tokens_before),
          countOf(c.tokens_after),
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
      expect(await compactionsOf(ctx.h, TOOLS_SESSION)).toEqual([]);
    });
  });
}
