/**
 * Normalization of what the real OpenCode 1.18.33 exported (test/fixtures/real/opencode-1.18.33/
 * PROVENANCE.md): each OTLP/JSON traces body normalized on its own, as the receiver does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { normalizeSpans } from '../../../src/ingest/index.ts';
import type { Compaction, LlmCall, ToolResult } from '../../../src/model/calls.ts';
import { decodeTraces } from '../../../src/otlp/decode.ts';
import { CTX, NO_CONTENT } from './helpers.ts';
import type { NormalizeContext } from '../../../src/ingest/index.ts';

const DIR = join(import.meta.dirname, '../../fixtures/real/opencode-1.18.33');

/** One captured session, body by body, normalized as the receiver would. */
function normalized(name: string, ctx: NormalizeContext = CTX) {
  const calls: LlmCall[] = [];
  const compactions: Compaction[] = [];
  const toolResults: ToolResult[] = [];
  let spans = 0;
  let kept = 0;
  let dropped = 0;
  for (const f of readdirSync(join(DIR, name)).sort()) {
    const r = decodeTraces(gunzipSync(readFileSync(join(DIR, name, f))).toString('utf8'), 'json');
    if (!r.ok) throw new Error(`${f}: ${r.reason}`);
    spans += r.value.items.length;
    const batch = normalizeSpans(r.value.items, ctx);
    kept += batch.keep.length;
    dropped += batch.dropped;
    calls.push(...batch.normalized.calls);
    compactions.push(...batch.normalized.compactions);
    toolResults.push(...batch.normalized.toolResults);
  }
  calls.sort((a, b) => (BigInt(a.startNs) < BigInt(b.startNs) ? -1 : 1));
  return { calls, compactions, toolResults, spans, kept, dropped };
}

describe('OpenCode 1.18.33, captured from the real CLI', () => {
  it('keeps the AI SDK spans and drops its hundreds of internal ones', () => {
    const r = normalized('compaction');
    expect(r.spans).toBeGreaterThan(500);
    // three calls, each ai.streamText + doStream, and one ai.toolCall
    expect(r.kept).toBe(7);
    expect(r.dropped).toBe(r.spans - r.kept);
  });

  it('reads the compaction: the summary call a side call, its compaction explaining the drop', () => {
    const { calls, compactions } = normalized('compaction');
    expect(calls.map((c) => [c.contextTokens, c.sideCall])).toEqual([
      [115_000, null],
      [617, 'compaction'],
      [1_096, null],
    ]);
    const session = calls[0]!.conversationId;
    expect(session).toMatch(/^ses_/);
    for (const c of calls)
      expect(c).toMatchObject({
        producer: 'opencode',
        conversationId: session,
        conversationSynthetic: false,
        runId: session,
        streamKey: `${session}|main`,
        requestModel: 'gpt-4o',
        contextWindow: 128_000,
        windowSource: 'catalog',
        maxOutputTokens: 16_384,
      });
    expect(compactions).toHaveLength(1);
    expect(compactions[0]).toMatchObject({
      conversationId: session,
      streamKey: `${session}|main`,
      evidence: 'span',
      kind: 'summarize',
      spanId: calls[1]!.spanId,
      atNs: calls[1]!.endNs,
    });
    expect(compactions[0]!.summary).toContain('## Goal');
    // between the call it shrank and the next
    expect(BigInt(compactions[0]!.atNs)).toBeGreaterThan(BigInt(calls[0]!.endNs));
    expect(BigInt(compactions[0]!.atNs)).toBeLessThan(BigInt(calls[2]!.startNs));
    // the read result sized as the model got it (its output), not OpenCode's whole tool answer
    const { toolResults } = normalized('compaction');
    expect(toolResults.map((t) => t.toolName)).toEqual(['read']);
    expect(toolResults[0]!.resultSize).toBeLessThan(200);
  });

  it('names the real tool of a cut tool call (OpenCode rewrites it to `invalid`), across --continue', () => {
    const { calls } = normalized('cut-off');
    expect(
      calls.map((c) => [c.finishReasonRaw, c.outputToolCall, c.outputToolName, c.sideCall]),
    ).toEqual([
      ['length', false, null, null],
      ['length', true, 'write', null],
      ['stop', false, null, null],
    ]);
    // two processes (two traces), one session
    expect(new Set(calls.map((c) => c.traceId)).size).toBe(2);
    expect(new Set(calls.map((c) => c.conversationId)).size).toBe(1);
  });

  it('without content capture, reads the same and keeps no prompt', () => {
    const { calls, compactions } = normalized('compaction', NO_CONTENT);
    expect(calls.map((c) => c.sideCall)).toEqual([null, 'compaction', null]);
    expect(compactions[0]!.summary).toBeNull();
    expect(compactions[0]!.summarySize).toBeGreaterThan(0);
  });
});
