/**
 * What rotscope reads of the attributes @rotscope/sdk writes: its compaction span (built with
 * the SDK's own attribute function, content capture off: the summary's size without its text)
 * and the `rotscope.input.sizes` attribute on LLM spans (parts without content).
 */
import { describe, expect, it } from 'vitest';
import { normalizeSpans } from '../../../src/ingest/index.ts';
import { compactionAttributes } from '../../../packages/sdk/src/compaction.ts';
import { CTX, span } from './helpers.ts';

const conv = { 'gen_ai.conversation.id': 'c' };

describe('@rotscope/sdk attributes in the normalizer', () => {
  it("the SDK's compaction span: kind, trigger, counts and the summary's size without its text", () => {
    const attributes = compactionAttributes({
      kind: 'truncate',
      trigger: 'manual',
      tokensBefore: 150_000,
      tokensAfter: 20_000,
      messagesKept: 4,
      summary: 'the user wants a parser; tests pass',
      conversationId: 'c',
    });
    expect(attributes['rotscope.compaction.summary']).toBeUndefined();
    // as an OTLP decoder hands them over: the SDK's attributes, none left undefined
    const decoded = JSON.parse(JSON.stringify(attributes)) as Record<string, string | number>;
    const b = normalizeSpans([span({ name: 'compaction', attributes: decoded })], CTX);
    expect(b.keep[0]?.role).toBe('compaction');
    expect(b.normalized.compactions).toEqual([
      expect.objectContaining({
        evidence: 'span',
        conversationId: 'c',
        kind: 'truncate',
        trigger: 'manual',
        tokensBefore: 150_000,
        tokensAfter: 20_000,
        messagesKept: 4,
        summarySize: 35,
        summary: null,
      }),
    ]);
  });

  const chat = (extra: Record<string, string | number>) =>
    span({
      name: 'chat claude-sonnet-4-6',
      attributes: {
        ...conv,
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'claude-sonnet-4-6',
        'gen_ai.usage.input_tokens': 16_000,
        'gen_ai.usage.output_tokens': 50,
        ...extra,
      },
    });

  it('rotscope.input.sizes gives a call its parts with content off', () => {
    const sizes = { unit: 'chars', system: 31, messages: 60_100, tools: { read_file: 60_000 } };
    const b = normalizeSpans([chat({ 'rotscope.input.sizes': JSON.stringify(sizes) })], CTX);
    expect(b.normalized.calls[0]?.parts).toEqual({
      unit: 'chars',
      total: 60_131,
      system: 31,
      tools: { read_file: 60_000 },
      source: 'messages',
    });
    const tokens = normalizeSpans(
      [chat({ 'rotscope.input.sizes': '{"unit":"tokens","tools":{"grep":900,"bad":-1}}' })],
      CTX,
    );
    expect(tokens.normalized.calls[0]?.parts).toEqual({
      unit: 'tokens',
      total: null,
      system: null,
      tools: { grep: 900 },
      source: 'messages',
    });
  });

  it('unreadable sizes are ignored, never a crash', () => {
    for (const bad of ['not json', '[1,2]', '{"unit":"words","tools":{"a":1}}', '{"tools":{}}']) {
      const b = normalizeSpans([chat({ 'rotscope.input.sizes': bad })], CTX);
      expect(b.normalized.calls[0]?.parts).toBeNull();
    }
  });
});
