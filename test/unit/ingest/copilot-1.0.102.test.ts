/**
 * Normalization of what the real GitHub Copilot CLI 1.0.102 exported and wrote
 * (test/fixtures/real/copilot-1.0.102/PROVENANCE.md): its traces body as sent, and its session
 * file, read as `rotscope import` reads it. The detectors then run on the calls as the evaluator
 * runs them: one takeover by `view` (named, not "unknown"), none after the compaction.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { normalizeSpans } from '../../../src/ingest/index.ts';
import { COPILOT_PRODUCER, copilotReportedWindows } from '../../../src/ingest/copilot.ts';
import {
  COPILOT_SESSION_PRODUCER,
  isCopilotSessionPath,
  normalizeCopilotSession,
} from '../../../src/ingest/copilot-sessions.ts';
import { inputFormatOf } from '../../../src/receiver/input-text.ts';
import type { LlmCall } from '../../../src/model/calls.ts';
import { decodeTraces } from '../../../src/otlp/decode.ts';
import { CTX, NO_CONTENT } from './helpers.ts';

const DIR = join(import.meta.dirname, '../../fixtures/real/copilot-1.0.102');
const text = (name: string) => gunzipSync(readFileSync(join(DIR, name))).toString('utf8');

function spansOf(name: string) {
  const r = decodeTraces(text(`${name}/traces.json.gz`), 'json');
  if (!r.ok) throw new Error(r.reason);
  return r.value.items;
}

const byStart = (calls: LlmCall[]) =>
  [...calls].sort((a, b) => (BigInt(a.startNs) < BigInt(b.startNs) ? -1 : 1));

describe('GitHub Copilot CLI 1.0.102, captured from the real CLI', () => {
  it('fill and compaction: new-only messages become held parts, tools named through their call ids', () => {
    const { calls, compactions } = normalizeSpans(spansOf('fill-compaction'), CTX).normalized;
    const main = byStart(calls);
    expect(main).toHaveLength(18);
    expect(new Set(main.map((c) => c.producer))).toEqual(new Set([COPILOT_PRODUCER]));
    expect(new Set(main.map((c) => `${c.contextWindow}/${c.windowSource}`))).toEqual(
      new Set(['64000/agent']),
    );
    expect(main[0]!.agentVersion).toBe('1.0.102');
    // kept per conversation and model, for calls the exporter sends apart from invoke_agent
    const reports = copilotReportedWindows('w', main);
    expect(reports).toHaveLength(18);
    expect(new Set(reports.map((r) => `${r.conversationId}/${r.model}/${r.window}`))).toEqual(
      new Set(['179d3531-8ce4-438d-96ef-e72265cec5bb/gpt-4o/64000']),
    );
    // each call holds what is new at it: the previous call's view result, by name
    expect(main[0]!.parts).toMatchObject({ unit: 'tokens', source: 'tool_spans', tools: {} });
    expect(Object.keys(main[1]!.parts!.tools)).toEqual(['view']);
    expect(main[1]!.parts!.tools.view).toBeGreaterThan(3_500);
    expect(main[1]!.parts!.system).toBeGreaterThan(1_000);
    expect(main.flatMap((c) => Object.keys(c.parts?.tools ?? {}))).not.toContain('unknown');
    expect(main.map((c) => c.contextTokens)).toContain(54_670);
    // one compaction: the event (not its start, the next call's summary part or the flags)
    expect(compactions.map((c) => `${c.evidence}/${c.kind}`)).toEqual(['span_event/summarize']);
    const [event] = compactions;
    expect([event!.tokensBefore, event!.tokensAfter, event!.summarySize]).toEqual([
      49_613, 14_895, 163,
    ]);
    expect(main.filter((c) => c.compacted)).toHaveLength(7);
  });

  it('cut-offs without content: the cut tool call named from its execute_tool span', () => {
    const { calls } = normalizeSpans(spansOf('cut-offs-no-content'), NO_CONTENT).normalized;
    const main = byStart(calls);
    expect(main.map((c) => [c.finishReasonRaw, c.outputToolCall, c.outputToolName])).toEqual([
      ['length', false, null],
      ['length', true, 'bash'],
      ['stop', false, null],
    ]);
    // no content: no tool sizes, no system prompt size
    expect(main.map((c) => c.parts)).toEqual([null, null, null]);
  });

  it('session files: one call per usage record, with the span calls’ request ids', () => {
    const path = '/home/u/.copilot/session-state/179d3531-8ce4-438d-96ef-e72265cec5bb/events.jsonl';
    expect(isCopilotSessionPath(path)).toBe(true);
    const file = text('fill-compaction/events.jsonl.gz');
    expect(inputFormatOf(file)).toBe('copilot_session');
    const { calls, compactions } = normalizeCopilotSession(file, CTX, path);
    expect(calls).toHaveLength(18);
    expect(new Set(calls.map((c) => c.producer))).toEqual(new Set([COPILOT_SESSION_PRODUCER]));
    expect(new Set(calls.map((c) => c.conversationId))).toEqual(
      new Set(['179d3531-8ce4-438d-96ef-e72265cec5bb']),
    );
    const fromSpans = normalizeSpans(spansOf('fill-compaction'), CTX).normalized.calls;
    expect(new Set(calls.map((c) => c.requestId))).toEqual(
      new Set(fromSpans.map((c) => c.requestId)),
    );
    expect(calls.map((c) => c.contextTokens)).toEqual(
      byStart(fromSpans).map((c) => c.contextTokens),
    );
    expect(new Set(calls.map((c) => `${c.contextWindow}/${c.windowSource}`))).toEqual(
      new Set(['64000/agent']),
    );
    expect(Object.keys(calls[1]!.parts!.tools)).toEqual(['view']);
    expect(compactions.map((c) => [c.tokensBefore, c.tokensAfter, c.trigger])).toEqual([
      [49_613, 14_895, 'auto'],
    ]);

    const cut = normalizeCopilotSession(text('cut-offs-no-content/events.jsonl.gz'), CTX, '');
    expect(cut.calls.map((c) => [c.finishReasonRaw, c.outputToolCall, c.outputToolName])).toEqual([
      ['length', false, null],
      ['length', true, 'bash'],
      ['stop', false, null],
    ]);
  });
});
