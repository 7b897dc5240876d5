/**
 * Test-only builders of normalized calls and compactions with defaults (no database): a call
 * or compaction of conversation `conv` at T0 + some seconds.
 */
import type { Compaction, LlmCall } from '../../src/model/calls.ts';

/** Base time of test calls: 2026-01-01T00:00:00Z in ns. */
export const T0 = 1_767_225_600_000_000_000n;

/** A call of conversation `conv` starting at T0 + `second` seconds. */
export function call(conv: string, second: number, overrides: Partial<LlmCall> = {}): LlmCall {
  const start = T0 + BigInt(Math.round(second * 1e9));
  const spanId = overrides.spanId ?? `${conv}-${String(second).padStart(6, '0')}`;
  return {
    workspaceId: 'default',
    traceId: `trace-${conv}`,
    spanId,
    parentSpanId: null,
    conversationId: conv,
    conversationSynthetic: false,
    agentId: null,
    streamKey: conv,
    runId: `run-${conv}`,
    sideCall: null,
    requestId: null,
    startNs: start.toString(),
    endNs: (start + 500_000_000n).toString(),
    producer: 'semconv',
    provider: 'anthropic',
    requestModel: 'claude-sonnet-4',
    responseModel: 'claude-sonnet-4',
    inputTokensRaw: 1000,
    cacheReadTokens: null,
    cacheWriteTokens: null,
    outputTokens: 100,
    contextTokens: 1000,
    usageRule: 'no_cache',
    contextWindow: 200_000,
    windowSource: 'catalog',
    agentVersion: null,
    finishReasonRaw: 'end_turn',
    finishClass: 'stop',
    outputToolCall: false,
    outputToolName: null,
    maxOutputTokens: null,
    parts: null,
    compacted: false,
    ...overrides,
  };
}

/** A compaction of conversation `conv` at T0 + `second` seconds. */
export function compaction(conv: string, second: number): Compaction {
  return {
    workspaceId: 'default',
    conversationId: conv,
    streamKey: conv,
    runId: `run-${conv}`,
    traceId: `trace-${conv}`,
    spanId: null,
    atNs: (T0 + BigInt(Math.round(second * 1e9))).toString(),
    evidence: 'span',
    kind: 'summarize',
    trigger: 'auto',
    tokensBefore: null,
    tokensAfter: null,
    messagesKept: null,
    summarySize: null,
    summary: null,
    sourceKey: `compaction-${conv}-${second}`,
  };
}
