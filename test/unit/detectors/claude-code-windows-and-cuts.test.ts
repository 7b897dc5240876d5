/**
 * context_too_full judged on the best window known in the run (an assumed window said so), and
 * output_cut_off when the producer does not say what the cut output was (issue 13, part 2).
 */
import { describe, expect, it } from 'vitest';
import {
  contextTooFull,
  type ContextTooFullState,
} from '../../../src/detectors/context-too-full.ts';
import { outputCutOff } from '../../../src/detectors/output-cut-off.ts';
import type { LlmCall, WindowSource } from '../../../src/model/calls.ts';
import { DEFAULT_THRESHOLDS, type FindingDraft } from '../../../src/model/findings.ts';

const CONTEXT = { thresholds: DEFAULT_THRESHOLDS };
let n = 0;

function call(p: {
  model: string;
  tokens: number | null;
  window: number;
  source: WindowSource;
  finish?: string;
  toolCall?: boolean | null;
}): LlmCall {
  n++;
  return {
    workspaceId: 'w',
    traceId: 't',
    spanId: `s${n}`,
    parentSpanId: null,
    conversationId: 'c',
    conversationSynthetic: false,
    agentId: null,
    streamKey: 'c|main',
    runId: 'c',
    sideCall: null,
    requestId: null,
    startNs: String(1_000 + n),
    endNs: String(1_000 + n),
    producer: 'claude_code',
    provider: 'anthropic',
    requestModel: p.model,
    responseModel: p.model,
    inputTokensRaw: p.tokens,
    cacheReadTokens: null,
    cacheWriteTokens: null,
    outputTokens: 32_000,
    contextTokens: p.tokens,
    usageRule: 'exclusive_producer',
    contextWindow: p.window,
    windowSource: p.source,
    agentVersion: null,
    finishReasonRaw: p.finish ?? 'end_turn',
    finishClass: p.finish === 'max_tokens' ? 'output_limit' : 'stop',
    outputToolCall: p.toolCall === undefined ? false : p.toolCall,
    outputToolName: null,
    maxOutputTokens: null,
    parts: null,
    compacted: false,
  };
}

function feed(calls: LlmCall[]): FindingDraft[] {
  let state: ContextTooFullState = contextTooFull.initial();
  const last = new Map<string, FindingDraft>();
  for (const c of calls) {
    const step = contextTooFull.step(state, { type: 'call', call: c }, CONTEXT);
    state = step.state;
    for (const f of step.findings) last.set(f.anchor, f);
  }
  return [...last.values()];
}

describe('context_too_full on windows the model id cannot settle', () => {
  it('keeps reporting the fullest call, judged on the larger window the run later shows', () => {
    // a public 1M session: a 200k guess, then usage above it proves the 1M window
    const found = feed([
      call({ model: 'claude-opus-4-6', tokens: 150_000, window: 200_000, source: 'catalog' }),
      call({ model: 'claude-opus-4-6', tokens: 413_000, window: 1_000_000, source: 'inferred' }),
    ]);
    expect(found).toHaveLength(1);
    const fullest = found[0]!.details.fullestCall as { usageTokens: number; window: number };
    expect([fullest.usageTokens, fullest.window]).toEqual([413_000, 1_000_000]);
    expect(found[0]!.summary).toContain('41% full (413,000 of 1,000,000 tokens)');
  });

  it('an earlier fullest call is judged again on the best window known', () => {
    const found = feed([
      call({ model: 'claude-opus-4-6', tokens: 150_000, window: 200_000, source: 'catalog' }),
      // the same model in the same run, shown with its 1M window (a [1m] span)
      call({ model: 'claude-opus-4-6[1m]', tokens: 20_000, window: 1_000_000, source: 'catalog' }),
    ]);
    const fullest = found[0]!.details.fullestCall as { usageTokens: number; window: number };
    expect([fullest.usageTokens, fullest.window]).toEqual([150_000, 1_000_000]);
  });

  it('an assumed window is said so in the finding', () => {
    const found = feed([
      call({ model: 'claude-opus-4-8', tokens: 800_000, window: 1_000_000, source: 'assumed' }),
    ]);
    expect(found[0]!.summary).toContain('window is assumed');
    expect(found[0]!.details.fullestCall).toMatchObject({ windowSource: 'assumed' });
  });

  it('a call that overflowed is named in the finding and makes it critical', () => {
    const overflow = call({
      model: 'claude-sonnet-4-5',
      tokens: null,
      window: 200_000,
      source: 'catalog',
    });
    overflow.finishReasonRaw = 'prompt is too long: 212000 tokens > 200000 maximum';
    overflow.finishClass = 'context_overflow';
    const found = feed([
      call({ model: 'claude-sonnet-4-5', tokens: 100_000, window: 200_000, source: 'catalog' }),
      overflow,
    ]);
    expect(found[0]!.severity).toBe('critical');
    expect(found[0]!.details.overflowCall).toMatchObject({ spanId: overflow.spanId });
  });
});

describe('output_cut_off when the telemetry does not say what was cut', () => {
  const cut = (toolCall: boolean | null) =>
    outputCutOff.step(
      {},
      {
        type: 'call',
        call: call({
          model: 'claude-sonnet-4-6',
          tokens: 1,
          window: 200_000,
          source: 'catalog',
          finish: 'max_tokens',
          toolCall,
        }),
      },
      CONTEXT,
    ).findings[0]!;

  it('unknown: a warning that says the kind of output is unknown (not "text")', () => {
    const f = cut(null);
    expect([f.severity, f.details.output]).toEqual(['warning', 'unknown']);
    expect(f.summary).toContain('whether it was text or a tool call is unknown');
  });
  it('known: text is a warning, a tool call critical', () => {
    expect([cut(false).severity, cut(false).details.output]).toEqual(['warning', 'text']);
    expect([cut(true).severity, cut(true).details.output]).toEqual(['critical', 'tool_call']);
  });
});
