/**
 * The one usage rule (src/model/usage-rules.ts) and the readers that use it: the status line,
 * transcript ingest, and the SDK's own copy (packages/sdk, a package of its own) on the same
 * cases, so the copies cannot drift apart again.
 */
import { describe, expect, it } from 'vitest';
import { readResponse } from '../../../packages/sdk/src/provider-shapes.ts';
import { transcriptUsage } from '../../../src/ingest/transcript.ts';
import {
  contextTokensOf,
  DEFAULT_USAGE_BANDS,
  usageLevelIn,
} from '../../../src/model/usage-rules.ts';
import { usageBands } from '../../../src/model/usage-bands.ts';

const CASES: Array<[name: string, usage: Record<string, unknown>, context: number | null]> = [
  [
    'top level only',
    {
      input_tokens: 8,
      cache_read_input_tokens: 1000,
      cache_creation_input_tokens: 50,
      output_tokens: 5,
    },
    1058,
  ],
  [
    'a server-side tool loop: the top level sums the iterations, the last message is the context',
    {
      input_tokens: 300,
      output_tokens: 40,
      iterations: [
        { type: 'message', input_tokens: 100, output_tokens: 20 },
        { type: 'message', input_tokens: 200, output_tokens: 20 },
      ],
    },
    200,
  ],
  [
    'a message re-written after a compaction boundary: zero top level, the real counts in iterations',
    {
      input_tokens: 0,
      output_tokens: 0,
      iterations: [
        { type: 'compaction', input_tokens: 90_000, output_tokens: 3_000 },
        { type: 'message', input_tokens: 12, cache_read_input_tokens: 14_000, output_tokens: 30 },
      ],
    },
    14_012,
  ],
  [
    'iterations that count nothing: the top level',
    { input_tokens: 70, iterations: [{ type: 'message', input_tokens: 0 }] },
    70,
  ],
  ['all zero is no measurement', { input_tokens: 0, output_tokens: 0, iterations: [] }, null],
];

describe('the context of an Anthropic usage object', () => {
  it.each(CASES)('%s', (_name, usage, context) => {
    expect(contextTokensOf(usage)).toBe(context);
    // transcript ingest: the same entry, its cache split kept
    const fromTranscript = transcriptUsage({ usage } as never);
    expect(fromTranscript === null ? null : fromTranscript.contextTokens).toBe(context);
    // the SDK's copy, on the same usage in a Messages API response
    const facts = readResponse('anthropic', {
      type: 'message',
      id: 'msg_1',
      model: 'claude-sonnet-4-6',
      usage,
      content: [],
    });
    if (context !== null) expect(facts.contextTokens).toBe(context);
  });
});

describe('the colour bands', () => {
  it('the default knobs give the status line’s 60 / 70 / 85 %, the workspace’s knobs their own', () => {
    expect(usageBands({ usageThreshold: 0.7, usageCritical: 0.85 })).toEqual(DEFAULT_USAGE_BANDS);
    const bands = usageBands({ usageThreshold: 0.5, usageCritical: 0.8 });
    expect(bands).toEqual({ dimBelow: 0.5, amberFrom: 0.5, redFrom: 0.8 });
    expect([0.59, 0.6, 0.69, 0.7, 0.85].map((s) => usageLevelIn(s))).toEqual([
      'dim',
      'normal',
      'normal',
      'amber',
      'red',
    ]);
    expect([0.49, 0.5, 0.8].map((s) => usageLevelIn(s, bands))).toEqual(['dim', 'amber', 'red']);
  });
});
