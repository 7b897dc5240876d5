/** The run view's API shapes (src/api/routes/strip.ts). */
import type { UsageBands } from '../format.ts';

export interface StripFinding {
  findingId: string;
  /**
   * The call the finding's text is about (an index into the columns): the fullest call for
   * context_too_full, else the call it is anchored on; null when not in the strip.
   */
  index: number | null;
  /** Every call its text counts (a tool_takeover's episode), in strip order. */
  calls: number[];
  detector: string;
  severity: string;
  kind: string | null;
  tokensLost: number | null;
  summary: string;
}

export interface Strip {
  id: string;
  scope: 'conversation' | 'run';
  calls: number;
  truncated: boolean;
  startedAt: number | null;
  models: string[];
  windowSources: string[];
  finishReasons: string[];
  sideCalls: string[];
  streams: Array<{ key: string; agentId: string | null }>;
  /** system, messages, other, tool:<name>. */
  parts: string[];
  columns: {
    startMs: number[];
    model: number[];
    input: Array<number | null>;
    cacheRead: Array<number | null>;
    cacheWrite: Array<number | null>;
    output: Array<number | null>;
    context: Array<number | null>;
    window: Array<number | null>;
    windowSource: number[];
    finish: number[];
    stream: number[];
    side: number[];
    /** Flat pairs [partIndex, tokens, ...] per call; null when sizes are unknown. */
    parts: Array<number[] | null>;
  };
  findings: StripFinding[];
  thresholds: { usageThreshold: number; usageCritical: number };
  /** The colour bands of a call's usage, from the workspace's knobs. */
  bands: UsageBands;
}

export interface CallEnd {
  traceId: string;
  spanId: string;
  tokens: number | null;
  window: number | null;
  model: string | null;
  startedAt: string | null;
}

export interface WhatWasLost {
  findingId: string;
  conversationId: string;
  runId: string;
  streamKey: string;
  kind: 'compacted' | 'lost';
  severity: string;
  summary: string;
  tokensLost: number | null;
  dropRatio: number | null;
  before: CallEnd;
  after: CallEnd;
  partsLost: Array<{ part: string; name: string | null; tokens: number }>;
  producer: string | null;
  dropped: {
    contentCaptured: boolean;
    count: number | null;
    messages: Array<{ role: string; chars: number; text: string | null; tool: string | null }>;
    chars: number | null;
  };
  replacement: {
    kind: string;
    trigger: string | null;
    evidence: string;
    tokensBefore: number | null;
    tokensAfter: number | null;
    messagesKept: number | null;
    summarySize: number | null;
    summary: string | null;
  } | null;
  systemPrompt: {
    before: number | null;
    after: number | null;
    unit: string | null;
    change: string | null;
    estimated: boolean;
    recorded: boolean;
    textBefore: string | null;
    textAfter: string | null;
  };
}
