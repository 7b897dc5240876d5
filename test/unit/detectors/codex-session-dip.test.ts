/**
 * A Codex session file whose usage dips 1.5% between turns (Codex drops some items of the turn
 * before; real public `rollout-*.jsonl` files do this) while one tool's results stay at 43-50%
 * of the input over seven calls: the dip is no lost history (history_lost needs a 30% and
 * 2,000-token drop), so it must not empty the results the stream holds, and the takeover is
 * reported. A drop that is lost history still empties them (src/model/held-results.ts).
 */
import { describe, expect, it } from 'vitest';
import { toolTakeover, type ToolTakeoverState } from '../../../src/detectors/tool-takeover.ts';
import { normalizeCodexSession } from '../../../src/ingest/codex-sessions.ts';
import type { LlmCall } from '../../../src/model/calls.ts';
import type { FindingDraft } from '../../../src/model/findings.ts';
import { DEFAULT_THRESHOLDS } from '../../../src/model/findings.ts';
import { heldPerCall, isHistoryCut } from '../../../src/model/held-results.ts';
import { CTX } from '../ingest/helpers.ts';

const SESSION = '01a2358b-0000-7000-8000-0000000000aa';
const PATH = `/home/u/.codex/sessions/2026/12/04/rollout-2026-12-04T10-00-00-${SESSION}.jsonl`;

/** One response: its context in tokens, then the tool it asks for (with its output's size) or the end. */
interface Step {
  tokens: number;
  tool?: { name: string; chars: number };
}

/** A session file of turns of responses, in the shape Codex 0.171.0 writes. */
function sessionFile(turns: Step[][]): string {
  const lines: unknown[] = [];
  let t = Date.parse('2026-12-04T10:00:00.000Z');
  let n = 0;
  const line = (type: string, payload: Record<string, unknown>) =>
    lines.push({ timestamp: new Date((t += 100)).toISOString(), type, payload });
  line('session_meta', { id: SESSION, cli_version: '0.171.0', cwd: '/work' });
  turns.forEach((steps, turn) => {
    line('event_msg', {
      type: 'task_started',
      turn_id: `turn-${turn}`,
      trace_id: `${String(turn).padStart(2, '0')}${'ab'.repeat(15)}`,
      model_context_window: 258_400,
    });
    line('turn_context', { turn_id: `turn-${turn}`, model: 'gpt-5.5' });
    line('response_item', { type: 'message', role: 'user', content: [] });
    for (const step of steps) {
      const callId = `call_${++n}`;
      if (step.tool)
        line('response_item', {
          type: 'function_call',
          name: step.tool.name,
          arguments: '{}',
          call_id: callId,
        });
      else
        line('response_item', {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Done.' }],
        });
      line('token_usage_record', {
        response_id: `resp_${n}`,
        usage: {
          input_tokens: step.tokens,
          cached_input_tokens: step.tokens - 500,
          output_tokens: 20,
        },
      });
      if (step.tool)
        line('response_item', {
          type: 'function_call_output',
          call_id: callId,
          output: 'x'.repeat(step.tool.chars),
        });
    }
  });
  return lines.map((l) => JSON.stringify(l)).join('\n');
}

const exec = (tokens: number, chars: number): Step => ({
  tokens,
  tool: { name: 'exec_command', chars },
});
const plan = (tokens: number): Step => ({ tokens, tool: { name: 'update_plan', chars: 12 } });
const end = (tokens: number): Step => ({ tokens });

/**
 * Four turns; `exec_command`'s results (10,000 estimated tokens, then +5,000, +4,000, +2,000)
 * are 45-48% of the input of each of the seven calls after a tool ran, and three of those calls
 * (the first with results in turns 2-4) report 1.5% less usage than the call before them.
 */
const DIPPING: Step[][] = [
  [exec(12_000, 40_000), end(22_000)],
  [plan(21_800), exec(21_670, 20_000), end(32_000)],
  [plan(31_800), exec(31_520, 16_000), end(40_000)],
  [plan(39_800), exec(39_400, 8_000), end(44_000)],
];

function takeovers(calls: readonly LlmCall[]): FindingDraft[] {
  let state: ToolTakeoverState = toolTakeover.initial();
  const out: FindingDraft[] = [];
  for (const call of calls) {
    const step = toolTakeover.step(
      state,
      { type: 'call', call },
      { thresholds: DEFAULT_THRESHOLDS },
    );
    state = step.state;
    out.push(...step.findings);
  }
  return out;
}

describe('a Codex session file whose usage dips 1.5% between turns', () => {
  const { calls } = normalizeCodexSession(sessionFile(DIPPING), CTX, PATH);

  it('holds exec_command at 45-49% of the input over seven calls, across the dips', () => {
    const counted = heldPerCall(calls.map((c) => ({ type: 'call' as const, ...c })));
    const shares = counted.flatMap((c) =>
      c === null ? [] : [Math.round(((c.tools['exec_command'] ?? 0) / c.total) * 1000) / 1000],
    );
    expect(shares).toHaveLength(7);
    for (const share of shares) {
      expect(share).toBeGreaterThanOrEqual(0.43);
      expect(share).toBeLessThanOrEqual(0.5);
    }
    // the dips: 22,000 → 21,670, 32,000 → 31,520, 40,000 → 39,400 (1.5%), none a history cut
    expect(isHistoryCut(22_000, 21_670)).toBe(false);
  });

  it('reports the takeover, once: one anchor, its later reports following the episode', () => {
    const found = takeovers(calls);
    const anchors = [...new Set(found.map((f) => f.anchor))];
    expect(anchors).toHaveLength(1);
    expect([
      ...new Set(found.map((f) => [f.detector, f.severity, f.details.tool].join(' '))),
    ]).toEqual(['tool_takeover warning exec_command']);
    // each later report counts one more call of the same episode
    const counts = found.map((f) => f.details.callCount);
    expect(counts).toEqual(counts.map((_, i) => 3 + i));
  });

  it('a drop that counts as lost history still empties the held results', () => {
    // the same, but turn 2 starts from a history cut in half: exec_command's old results are gone
    const cut: Step[][] = [
      [exec(12_000, 40_000), end(22_000)],
      [plan(11_500), exec(11_000, 4_000), end(12_500)],
    ];
    const { calls: cutCalls } = normalizeCodexSession(sessionFile(cut), CTX, PATH);
    const counted = heldPerCall(cutCalls.map((c) => ({ type: 'call' as const, ...c })));
    const held = counted.flatMap((c) => (c === null ? [] : [c.tools['exec_command'] ?? 0]));
    expect(held).toEqual([10_000, 0, 1_000]);
    expect(isHistoryCut(22_000, 11_000)).toBe(true);
    // a 30% fall of fewer than 2,000 tokens is no cut either
    expect(isHistoryCut(5_000, 3_500)).toBe(false);
  });
});
