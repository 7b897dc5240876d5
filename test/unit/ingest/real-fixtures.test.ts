/**
 * The three real third-party files in test/fixtures/real/ (copied unedited from ../shared/fixtures/real; see INDEX.md),
 * read in place. The pinned numbers can be checked by hand with jq or a few lines of Python.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { normalizeSpans, normalizeTranscript } from '../../../src/ingest/index.ts';
import type { LlmCall } from '../../../src/model/calls.ts';
import { CTX, NO_CONTENT, spansFromOtlpJson } from './helpers.ts';

const REAL = fileURLToPath(new URL('../../fixtures/real/', import.meta.url));
const read = (f: string) => readFileSync(REAL + f, 'utf8');
const sum = (xs: Array<number | null>) => xs.reduce<number>((a, b) => a + (b ?? 0), 0);

describe('claude-code_transcript_sidechains.jsonl (Claude Code 1.0.98)', () => {
  const SID = 'fe5e1c67-53e7-4862-81ae-d0e013e3270b';
  const r = normalizeTranscript(read('claude-code_transcript_sidechains.jsonl'), CTX);
  const byStream = new Map<string, LlmCall[]>();
  for (const c of r.calls) byStream.set(c.streamKey, [...(byStream.get(c.streamKey) ?? []), c]);

  it('170 unique assistant messages → 170 calls (262 assistant lines de-duplicated)', () => {
    expect(r.calls).toHaveLength(170);
    expect(new Set(r.calls.map((c) => c.spanId)).size).toBe(170);
  });
  it('usage: input, cache read, cache write summed once per message', () => {
    expect(sum(r.calls.map((c) => c.inputTokensRaw))).toBe(818);
    expect(sum(r.calls.map((c) => c.cacheReadTokens))).toBe(3_647_854);
    expect(sum(r.calls.map((c) => c.cacheWriteTokens))).toBe(137_976);
    expect(r.calls.every((c) => c.usageRule === 'exclusive_producer')).toBe(true);
  });
  it('the main thread: 9 calls, first 3 + 14874 + 1331 = 16208 tokens, fullest 21552', () => {
    const main = byStream.get(`${SID}|main`) ?? [];
    expect(main).toHaveLength(9);
    expect(main[0]).toMatchObject({
      requestId: 'req_011CSkYzZmrLKTfC5kKrttht',
      inputTokensRaw: 3,
      cacheReadTokens: 14874,
      cacheWriteTokens: 1331,
      contextTokens: 16208,
    });
    expect(sum(main.map((c) => c.contextTokens))).toBe(168_358);
    expect(Math.max(...main.map((c) => c.contextTokens ?? 0))).toBe(21_552);
  });
  it('405 sidechain lines → 5 sub-agent streams (161 calls), keyed by their root lines', () => {
    const side = [...byStream.entries()].filter(([k]) => !k.endsWith('|main'));
    expect(side.map(([k, v]) => [k.slice(SID.length + 1), v.length])).toEqual([
      ['sidechain-6690d10e-f521-4ac0-800d-e5eb7a2d8072', 9],
      ['sidechain-60dade70-20bb-4edb-9dad-9f08267e0cc2', 34],
      ['sidechain-f4546a51-ea10-47e0-b4e0-76802974f8a9', 40],
      ['sidechain-0d692b0f-17cb-4fd0-94fb-215dabcef803', 25],
      ['sidechain-f4ab2bf6-d642-431a-85cb-66691f24c404', 53],
    ]);
    const all = side.flatMap(([, v]) => v);
    expect(sum(all.map((c) => c.contextTokens))).toBe(3_618_290);
    expect(Math.max(...all.map((c) => c.contextTokens ?? 0))).toBe(42_726);
    expect(all.every((c) => c.sideCall === null && c.agentId !== null)).toBe(true);
  });
  it('model window, stop reasons (null on most lines), tool results, no compaction (the summary line is a title)', () => {
    expect(
      r.calls.every(
        (c) =>
          c.responseModel === 'claude-sonnet-4-20250514' &&
          c.contextWindow === 200_000 &&
          c.windowSource === 'catalog',
      ),
    ).toBe(true);
    const classes = r.calls.map((c) => c.finishClass).filter((x) => x !== null);
    expect(classes.sort()).toEqual(['stop', 'tool_call', 'tool_call', 'tool_call']);
    expect(r.toolResults).toHaveLength(167);
    expect(r.toolResults.filter((t) => t.toolName === 'unknown')).toHaveLength(0);
    expect(r.compactions).toEqual([]);
    expect(r.calls.every((c) => c.runId === SID && c.conversationId === SID)).toBe(true);
  });
  it('parts: tool results accumulate, in tokens estimated from the usage growth', () => {
    const main = byStream.get(`${SID}|main`) ?? [];
    expect(main[0]?.parts).toMatchObject({
      unit: 'tokens',
      system: null,
      tools: {},
      source: 'estimated',
    });
    // 16,208 → 16,447 tokens: the 28-character Glob result's share of the 239-token growth
    // would be 21 tokens, more than 28 characters can hold: at most one token per 2 characters
    expect(main[1]?.parts?.tools).toEqual({ Glob: 14 });
    // 16,447 → 16,750: the 160-character TodoWrite result gets 46 of the 303 tokens
    expect(main[2]?.parts?.tools).toEqual({ Glob: 14, TodoWrite: 46 });
    // the last main call: Task results (the sub-agents' answers) hold about 2k of 21.5k tokens
    expect(main[8]?.contextTokens).toBe(21_552);
    expect(main[8]?.parts?.tools).toEqual({ Glob: 14, TodoWrite: 141, Task: 1_978, Write: 16 });
  });
});

describe('otlp-json_openinference_openai.json (OpenInference OpenAI, 6 requests)', () => {
  const spans = spansFromOtlpJson(read('otlp-json_openinference_openai.json'));
  const b = normalizeSpans(spans, NO_CONTENT);
  const calls = b.normalized.calls;

  it('8 spans: 6 LLM spans kept, the quotient spans dropped', () => {
    expect(spans).toHaveLength(8);
    expect(b.keep.map((s) => s.role)).toEqual(Array(6).fill('llm_call'));
    expect(b.dropped).toBe(2);
  });
  it('tokens per call (llm.token_count.*; cache_read is a subset of prompt)', () => {
    expect(
      calls.map((c) => [
        c.inputTokensRaw,
        c.cacheReadTokens,
        c.outputTokens,
        c.contextTokens,
        c.usageRule,
      ]),
    ).toEqual([
      [941, 0, 1202, 941, 'inclusive'],
      [2711, 0, 730, 2711, 'inclusive'],
      [1453, 0, 1410, 1453, 'inclusive'],
      [2912, 0, 490, 2912, 'inclusive'],
      [3841, 2816, 1896, 3841, 'inclusive'],
      [6094, 2688, 1394, 6094, 'inclusive'],
    ]);
  });
  it('model, window, max tokens, finish reasons from the raw output.value, one synthetic conversation', () => {
    expect(
      calls.every(
        (c) =>
          c.requestModel === 'o1-2024-12-17' &&
          c.contextWindow === 200_000 &&
          c.maxOutputTokens === 8192 &&
          c.provider === 'openai',
      ),
    ).toBe(true);
    expect(calls.map((c) => c.finishClass)).toEqual([
      'stop',
      'stop',
      'stop',
      'tool_call',
      'tool_call',
      'stop',
    ]);
    expect(calls.map((c) => c.outputToolName)).toEqual([
      null,
      null,
      null,
      'web_search',
      'final_answer',
      null,
    ]);
    expect(new Set(calls.map((c) => c.streamKey)).size).toBe(1);
    expect(
      calls.every(
        (c) =>
          c.conversationSynthetic &&
          c.conversationId === c.traceId &&
          c.producer === 'openinference',
      ),
    ).toBe(true);
  });
  it('parts from llm.input_messages (chars); content removed from the kept spans', () => {
    expect(calls.map((c) => c.parts?.system)).toEqual([0, 10116, 0, 6028, 6028, 10116]);
    for (const s of b.keep) {
      expect(
        Object.keys(s.attributes).some(
          (k) => k.startsWith('llm.input_messages.') || k === 'input.value' || k === 'output.value',
        ),
      ).toBe(false);
      expect(s.attributes['llm.token_count.prompt']).toBeDefined();
    }
  });
});

describe('tempo-export_genai_kagent.json (kagent / Google ADK + OpenLLMetry, Tempo `batches`)', () => {
  const spans = spansFromOtlpJson(read('tempo-export_genai_kagent.json'));
  const b = normalizeSpans(spans, CTX);
  const calls = b.normalized.calls;

  it('86 spans; 6 carry gen_ai.usage, but they are 2 calls seen by 3 layers (call_llm → generate_content → openai.chat)', () => {
    expect(spans).toHaveLength(86);
    expect(
      spans.filter((s) => Object.keys(s.attributes).some((k) => k.startsWith('gen_ai.usage.'))),
    ).toHaveLength(6);
    expect(calls.map((c) => c.spanId)).toEqual(['0e5deee1c91f77f8', '2373d7ea8819e064']);
    const roles = new Map(b.keep.map((s) => [s.name, s.role]));
    expect(roles.get('call_llm')).toBe('agent_step');
    expect(roles.get('generate_content gpt-4.1-mini')).toBe('agent_step');
    expect(roles.get('execute_tool helm_list_releases')).toBe('tool');
    expect(b.keep).toHaveLength(25);
    expect(b.dropped).toBe(61);
  });
  it('usage with cache_read (legacy spelling), window, finish reasons, conversation', () => {
    expect(
      calls.map((c) => [
        c.inputTokensRaw,
        c.cacheReadTokens,
        c.outputTokens,
        c.contextTokens,
        c.usageRule,
      ]),
    ).toEqual([
      [2256, 0, 13, 2256, 'inclusive'],
      [2392, 0, 116, 2392, 'inclusive'],
    ]);
    expect(calls.map((c) => [c.finishReasonRaw, c.finishClass, c.outputToolName])).toEqual([
      ['tool_calls', 'tool_call', 'helm_list_releases'],
      ['stop', 'stop', null],
    ]);
    expect(
      calls.every(
        (c) =>
          c.streamKey === 'ctx-eff35888-55ab-4eb0-b90d-7b21f711f91f|main' &&
          c.responseModel === 'gpt-4.1-mini-2025-04-14' &&
          c.contextWindow === 1_047_576,
      ),
    ).toBe(true);
    expect(calls[0]?.startNs).toBe('1777555053809433900'); // bare JSON numbers kept exact
    expect(calls.map((c) => c.requestId)).toEqual([
      'chatcmpl-DaLYlqJDD4djXUGg9TjyClK9BdeVV',
      'chatcmpl-DaLYmIS19l0ClnUwPDWAYAmn2jz66',
    ]);
  });
  it('parts from gen_ai.prompt.N (system prompt; tool result joined through tool_call_id) and the tool span', () => {
    expect(calls[0]?.parts).toMatchObject({ system: 7705, tools: {} });
    expect(calls[1]?.parts).toMatchObject({ system: 7705, tools: { helm_list_releases: 336 } });
    expect(b.normalized.toolResults).toEqual([
      expect.objectContaining({
        toolName: 'helm_list_releases',
        toolCallId: 'call_w0eKlvnaE7S9GQJeSSs0gn05',
        sizeUnit: 'chars',
      }),
    ]);
  });
});
