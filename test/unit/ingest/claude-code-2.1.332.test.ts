/**
 * Normalization of what the real Claude Code CLI 2.1.332 exported (test/fixtures/real/
 * claude-code-2.1.332/PROVENANCE.md): its spans carry the semantic-convention token attributes
 * beside the native ones, `gen_ai.conversation.id` is the sub-agent's id on sub-agent spans, and
 * its transcripts add request lines (`api-request`, `api-request-shape`) and other entry types.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalizeLogs, normalizeSpans, normalizeTranscript } from '../../../src/ingest/index.ts';
import { transcriptOptionsForPath } from '../../../src/ingest/transcript.ts';
import type { LlmCall } from '../../../src/model/calls.ts';
import { CTX, capturedOtlp } from './helpers.ts';

const DIR = join(import.meta.dirname, '../../fixtures/real/claude-code-2.1.332');
const captured = (name: string) => capturedOtlp(join(DIR, name));
const byStart = (calls: LlmCall[]) =>
  [...calls].sort((a, b) => (BigInt(a.startNs) < BigInt(b.startNs) ? -1 : 1));
const attr = (c: { attributes: Record<string, unknown> }, k: string) => c.attributes[k];

describe('Claude Code 2.1.332, captured from the real CLI', () => {
  it('spans carry both token conventions; the usage is counted once, as the log event says', () => {
    const { spans, logs } = captured('reread');
    const llm = spans.filter((s) => s.name === 'claude_code.llm_request');
    // what the CLI sent: the semconv input includes the cache, the native one does not
    const first = llm.find((s) => attr(s, 'cache_creation_tokens') === 1000)!;
    expect(Number(attr(first, 'gen_ai.usage.input_tokens'))).toBe(
      Number(attr(first, 'input_tokens')) +
        Number(attr(first, 'cache_read_tokens')) +
        Number(attr(first, 'cache_creation_tokens')),
    );
    const fromSpans = byStart(normalizeSpans(spans, CTX).normalized.calls);
    const fromLogs = byStart(normalizeLogs(logs, CTX).normalized.calls);
    // the fake reported input 8 + cache read 20,000 / 21,500 / ... + cache write 1,000
    expect(fromSpans.map((c) => c.contextTokens)).toEqual([21_008, 22_508, 23_008, 23_508, 24_008]);
    expect(fromSpans.every((c) => c.usageRule === 'inclusive_attribute')).toBe(true);
    expect(fromLogs.map((c) => c.contextTokens)).toEqual(fromSpans.map((c) => c.contextTokens));
    expect(fromLogs.map((c) => c.requestId)).toEqual(fromSpans.map((c) => c.requestId));
  });

  it('a re-read of an unchanged file is a new result with the full bytes', () => {
    const { logs } = captured('reread');
    const reads = normalizeLogs(logs, CTX).normalized.toolResults.filter(
      (r) => r.toolName === 'Read',
    );
    expect(reads).toHaveLength(2);
    expect(reads[1]!.resultSize).toBe(reads[0]!.resultSize);
    expect(reads[0]!.toolCallId).not.toBe(reads[1]!.toolCallId);
  });

  it('a sub-agent is a stream of the session, not a conversation of its own', () => {
    const { spans, logs } = captured('subagent');
    const llm = spans.filter((s) => s.name === 'claude_code.llm_request');
    const session = attr(llm[0]!, 'session.id') as string;
    const agentSpan = llm.find((s) => attr(s, 'agent_id') !== undefined)!;
    const agentId = attr(agentSpan, 'agent_id') as string;
    // what the CLI sent: the sub-agent's id as the conversation id
    expect(attr(agentSpan, 'gen_ai.conversation.id')).toBe(agentId);

    for (const calls of [
      normalizeSpans(spans, CTX).normalized.calls,
      normalizeLogs(logs, CTX).normalized.calls,
    ]) {
      expect(new Set(calls.map((c) => c.conversationId))).toEqual(new Set([session]));
      const streams = byStart(calls).map((c) => [c.streamKey, c.contextTokens, c.sideCall]);
      expect(streams).toEqual([
        [`${session}|main`, 40_008, null],
        [`${session}|main`, 40_608, null],
        [`${session}|${agentId}`, 8_008, null],
        [`${session}|${agentId}`, 8_308, null],
        // the background Agent's finish starts a second interaction with one more main call
        [`${session}|main`, 41_008, null],
      ]);
    }
    // the sub-agent's tool spans without agent_id still belong to its stream
    const tools = normalizeSpans(spans, CTX).normalized.toolResults;
    expect(tools.map((t) => [t.toolName, t.streamKey])).toEqual([
      ['Agent', `${session}|main`],
      ['Bash', `${session}|${agentId}`],
    ]);
  });

  it('transcripts: the system prompt from api-request-shape; new entry types are skipped', () => {
    const file = join(DIR, 'reread/transcript.jsonl');
    const text = readFileSync(file, 'utf8');
    const shape = text
      .split('\n')
      .filter((l) => l.includes('"api-request-shape"'))
      .map((l) => JSON.parse(l) as { shape: { system: Array<{ text: string }> } })[0]!;
    const systemChars = shape.shape.system.reduce((n, b) => n + b.text.length, 0);
    const r = normalizeTranscript(text, CTX, transcriptOptionsForPath(file));
    expect(r.calls.map((c) => c.contextTokens)).toEqual([21_008, 22_508, 23_008, 23_508, 24_008]);
    expect(r.calls.map((c) => c.parts?.system)).toEqual(Array(5).fill(Math.round(systemChars / 4)));
    expect(r.calls.every((c) => c.sideCall === null)).toBe(true);
    // the request ids match telemetry's: one request, one call, whatever brought it
    const fromLogs = byStart(normalizeLogs(captured('reread').logs, CTX).normalized.calls);
    expect(r.calls.map((c) => c.requestId)).toEqual(fromLogs.map((c) => c.requestId));
  });

  it('a transcript request line with querySource compact makes its call a side call', () => {
    const lines = [
      { type: 'cost-state', sessionId: 's', totalCostUSD: 0.1 },
      { type: 'api-request', sessionId: 's', id: 'r1', querySource: 'compact', shapeHash: 'h' },
      { type: 'api-request-shape', sessionId: 's', shapeHash: 'h', shape: 'not an object' },
      {
        type: 'assistant',
        sessionId: 's',
        uuid: 'u1',
        requestRef: 'r1',
        timestamp: '2026-12-01T00:00:00.000Z',
        message: {
          id: 'm1',
          model: 'claude-opus-5-5',
          content: [{ type: 'text', text: 'summary' }],
          usage: { input_tokens: 10, cache_read_input_tokens: 100, output_tokens: 5 },
        },
      },
    ];
    const r = normalizeTranscript(lines.map((l) => JSON.stringify(l)).join('\n'), CTX);
    expect(r.calls.map((c) => [c.sideCall, c.contextTokens, c.parts?.system])).toEqual([
      ['compact', 110, null],
    ]);
  });
});
