import { describe, expect, it } from 'vitest';
import { normalizeSpans } from '../../../src/ingest/index.ts';
import { CTX, span } from './helpers.ts';

const conv = { 'gen_ai.conversation.id': 'c' };

describe('compaction markers on spans (conventions §9.8)', () => {
  it('a custom compaction span (pydantic-ai-harness shape) with tokens before/after', () => {
    const s = span({
      traceId: 't'.padEnd(32, '0'),
      spanId: 's'.padEnd(16, '0'),
      name: 'compact_messages',
      endTimeUnixNano: '900',
      attributes: {
        ...conv,
        'compaction.strategy': 'summarize',
        'compaction.tokens_before': 150_000,
        'compaction.tokens_after': 20_000,
        'compaction.messages_after': 4,
      },
    });
    const b = normalizeSpans([s], CTX);
    expect(b.keep[0]?.role).toBe('compaction');
    expect(b.normalized.compactions).toEqual([
      expect.objectContaining({
        evidence: 'span',
        kind: 'summarize',
        tokensBefore: 150_000,
        tokensAfter: 20_000,
        messagesKept: 4,
        atNs: '900',
        streamKey: 'c|main',
        sourceKey: `span:${s.traceId}:${s.spanId}`,
      }),
    ]);
  });
  it('gen_ai.operation.name=compaction; openclaw span with *_before/_after', () => {
    const b = normalizeSpans(
      [
        span({
          name: 'openclaw.compaction',
          attributes: {
            ...conv,
            'openclaw.compaction.tokens_before': 10,
            'openclaw.compaction.tokens_after': 2,
          },
        }),
      ],
      CTX,
    );
    expect(b.normalized.compactions[0]).toMatchObject({
      evidence: 'span',
      tokensBefore: 10,
      tokensAfter: 2,
    });
  });
  it('span events rius.compaction / rotscope.compaction / *compaction*', () => {
    const s = span({
      name: 'agent',
      attributes: { ...conv, 'gen_ai.operation.name': 'invoke_agent' },
      events: [
        {
          name: 'rius.compaction',
          timeUnixNano: '5',
          attributes: {
            trigger: 'auto',
            tokens_before: 100,
            tokens_after: 10,
            kind: 'clear_tool_results',
          },
        },
        { name: 'rotscope.compaction', timeUnixNano: '6', attributes: { trigger: 'manual' } },
        { name: 'gen_ai.request.attempt', timeUnixNano: '7', attributes: {} },
      ],
    });
    const cs = normalizeSpans([s], CTX).normalized.compactions;
    expect(cs.map((c) => [c.evidence, c.atNs, c.trigger, c.kind, c.tokensBefore])).toEqual([
      ['span_event', '5', 'auto', 'clear_tool_results', 100],
      ['span_event', '6', 'manual', 'summarize', null],
    ]);
    expect(new Set(cs.map((c) => c.sourceKey)).size).toBe(2);
  });
  it('the @rotscope/sdk clear markers on an LLM span: tool uses -> clear_tool_results, thinking -> other, never summarize', () => {
    const s = span({
      name: 'chat claude-sonnet-4-6',
      startTimeUnixNano: '10',
      attributes: { ...conv, 'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': 30 },
      events: [
        {
          name: 'rotscope.compaction',
          timeUnixNano: '10',
          attributes: {
            'rotscope.compaction.kind': 'clear_tool_results',
            'rotscope.compaction.edit': 'clear_tool_uses_20250919',
            'rotscope.compaction.tokens_cleared': 110,
            'rotscope.compaction.tokens_before': 140,
            'rotscope.compaction.tokens_after': 30,
          },
        },
        {
          name: 'rotscope.compaction',
          timeUnixNano: '10',
          attributes: {
            'rotscope.compaction.kind': 'other',
            'rotscope.compaction.edit': 'clear_thinking_20251015',
          },
        },
        // a producer that sends the provider's edit type as the kind
        {
          name: 'rotscope.compaction',
          timeUnixNano: '10',
          attributes: { kind: 'clear_thinking_20251015' },
        },
        {
          name: 'rotscope.compaction',
          timeUnixNano: '10',
          attributes: { kind: 'clear_tool_uses_20250919' },
        },
      ],
    });
    const { calls, compactions } = normalizeSpans([s], CTX).normalized;
    expect(calls.map((c) => c.compacted)).toEqual([false]);
    expect(compactions.map((c) => [c.evidence, c.kind, c.tokensBefore, c.tokensAfter])).toEqual([
      ['span_event', 'clear_tool_results', 140, 30],
      ['span_event', 'other', null, null],
      ['span_event', 'other', null, null],
      ['span_event', 'clear_tool_results', null, null],
    ]);
  });

  it('a span of no other GenAI interest is kept for its compaction event', () => {
    const s = span({
      name: 'agent.loop',
      resource: { 'session.id': 'r' },
      events: [{ name: 'rotscope.compaction', timeUnixNano: '9', attributes: {} }],
    });
    const b = normalizeSpans([s], CTX);
    expect(b.dropped).toBe(0);
    expect(b.normalized.compactions).toEqual([
      expect.objectContaining({ evidence: 'span_event', conversationId: 'r', streamKey: 'r|main' }),
    ]);
  });
  it('gen_ai.conversation.compacted=true sets compacted and yields a flag compaction at the call start', () => {
    const s = span({
      startTimeUnixNano: '111',
      attributes: {
        ...conv,
        'gen_ai.operation.name': 'chat',
        'gen_ai.conversation.compacted': true,
      },
    });
    const b = normalizeSpans([s], CTX);
    expect(b.normalized.calls[0]?.compacted).toBe(true);
    expect(b.normalized.compactions).toEqual([
      expect.objectContaining({
        evidence: 'flag',
        atNs: '111',
        sourceKey: `flag:${s.traceId}:${s.spanId}`,
      }),
    ]);
  });
  it('compaction message parts: a replayed input part with an id dedupes across calls', () => {
    const input = JSON.stringify([
      { role: 'user', parts: [{ type: 'compaction', id: 'cmp_9', content: 'sum' }] },
    ]);
    const a = span({
      attributes: { ...conv, 'gen_ai.operation.name': 'chat', 'gen_ai.input.messages': input },
    });
    const b = span({
      attributes: { ...conv, 'gen_ai.operation.name': 'chat', 'gen_ai.input.messages': input },
    });
    const r = normalizeSpans([a, b], CTX);
    expect(r.normalized.calls.every((c) => c.compacted)).toBe(true);
    expect(new Set(r.normalized.compactions.map((c) => c.sourceKey))).toEqual(
      new Set(['part:c:cmp_9']),
    );
    expect(r.normalized.compactions[0]).toMatchObject({ evidence: 'message_part', summarySize: 3 });
  });
  it('finish reason compaction', () => {
    const s = span({
      endTimeUnixNano: '77',
      attributes: {
        ...conv,
        'gen_ai.operation.name': 'chat',
        'gen_ai.response.finish_reasons': ['compaction'],
      },
    });
    const cs = normalizeSpans([s], CTX).normalized.compactions;
    expect(cs).toEqual([expect.objectContaining({ evidence: 'finish_reason', atNs: '77' })]);
  });
  it('Claude Code llm_request with query_source=compact is a side call, not a second compaction', () => {
    const s = span({
      name: 'claude_code.llm_request',
      attributes: {
        'session.id': 'S',
        query_source: 'compact',
        request_id: 'req_c',
        input_tokens: 3,
        cache_read_tokens: 170_000,
      },
    });
    const b = normalizeSpans([s], CTX);
    expect(b.normalized.calls[0]?.sideCall).toBe('compact');
    // its compaction is the `compaction` log event's (one compaction counts once)
    expect(b.normalized.compactions).toEqual([]);
  });
  it('summary text is kept only when content is captured', () => {
    const s = span({
      name: 'compact',
      attributes: {
        ...conv,
        'gen_ai.operation.name': 'compact',
        'compaction.summary': 'the summary',
      },
    });
    expect(normalizeSpans([s], CTX).normalized.compactions[0]).toMatchObject({
      summary: 'the summary',
      summarySize: 11,
    });
    expect(
      normalizeSpans([s], { ...CTX, captureContent: false }).normalized.compactions[0],
    ).toMatchObject({ summary: null, summarySize: 11 });
  });
});
