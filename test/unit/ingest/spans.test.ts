import { describe, expect, it } from 'vitest';
import { normalizeSpans } from '../../../src/ingest/index.ts';
import { CTX, NO_CONTENT, span } from './helpers.ts';

const T = 'c'.repeat(32);

describe('normalizeSpans: keep and drop', () => {
  it('keeps GenAI spans with their role and counts the rest as dropped', () => {
    const b = normalizeSpans(
      [
        span({ name: 'GET /health', attributes: { 'http.request.method': 'GET' } }),
        span({ name: 'db.query', attributes: {} }),
        span({ name: 'POST', attributes: { 'gen_ai.conversation.id': 'c' } }),
        span({ name: 'chat gpt-4o', attributes: { 'gen_ai.operation.name': 'chat' } }),
        span({ name: 'claude_code.hook', attributes: {} }),
      ],
      CTX,
    );
    expect(b.dropped).toBe(2);
    expect(b.keep.map((s) => [s.name, s.role])).toEqual([
      ['POST', 'other'],
      ['chat gpt-4o', 'llm_call'],
      ['claude_code.hook', 'other'],
    ]);
  });
});

describe('normalizeSpans: a producer that sends nothing but a span name and token counts', () => {
  it('is a call with usage, no model, no window', () => {
    const c = normalizeSpans(
      [
        span({
          name: 'llm',
          attributes: { 'gen_ai.usage.input_tokens': 1234, 'gen_ai.usage.output_tokens': 56 },
        }),
      ],
      CTX,
    ).normalized.calls;
    expect(c).toHaveLength(1);
    expect(c[0]).toMatchObject({
      producer: 'generic',
      inputTokensRaw: 1234,
      outputTokens: 56,
      contextTokens: 1234,
      usageRule: 'no_cache',
      requestModel: null,
      contextWindow: null,
      finishClass: null,
      parts: null,
      conversationSynthetic: true,
    });
  });
});

describe('normalizeSpans: aggregates are not calls', () => {
  it('Vercel v7 invoke_agent root with usage totals, chat children are the calls', () => {
    const root = span({
      traceId: T,
      spanId: '1'.repeat(16),
      name: 'invoke_agent claude',
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.usage.input_tokens': 300 },
    });
    const kids = [100, 200].map((n) =>
      span({
        traceId: T,
        parentSpanId: root.spanId,
        name: 'chat claude',
        attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': n },
      }),
    );
    const calls = normalizeSpans([root, ...kids], CTX).normalized.calls;
    expect(calls.map((c) => c.contextTokens)).toEqual([100, 200]);
  });
  it('Vercel legacy ai.generateText root → doGenerate children', () => {
    const root = span({
      traceId: T,
      spanId: '2'.repeat(16),
      name: 'ai.generateText',
      attributes: { 'ai.usage.promptTokens': 30 },
    });
    const kid = span({
      traceId: T,
      parentSpanId: root.spanId,
      name: 'ai.generateText.doGenerate',
      attributes: { 'ai.usage.promptTokens': 30, 'ai.model.id': 'gpt-4o' },
    });
    const b = normalizeSpans([root, kid], CTX);
    expect(b.normalized.calls).toHaveLength(1);
    expect(b.normalized.calls[0]).toMatchObject({
      producer: 'vercel',
      requestModel: 'gpt-4o',
      contextWindow: 128_000,
    });
  });
  it('a token-only wrapper or a call-classified wrapper with a call below is demoted (ADK call_llm → generate_content → openai.chat)', () => {
    const a = span({
      traceId: T,
      spanId: '3'.repeat(16),
      name: 'call_llm',
      attributes: { 'gen_ai.usage.input_tokens': 2256 },
    });
    const b = span({
      traceId: T,
      spanId: '4'.repeat(16),
      parentSpanId: a.spanId,
      name: 'generate_content gpt-4.1-mini',
      attributes: {
        'gen_ai.operation.name': 'generate_content',
        'gen_ai.usage.input_tokens': 2256,
      },
    });
    const c = span({
      traceId: T,
      spanId: '5'.repeat(16),
      parentSpanId: b.spanId,
      name: 'openai.chat',
      attributes: { 'llm.request.type': 'chat', 'gen_ai.usage.input_tokens': 2256 },
    });
    const r = normalizeSpans([c, b, a], CTX);
    expect(r.normalized.calls.map((x) => x.spanId)).toEqual([c.spanId]);
    expect(r.keep.map((s) => s.role)).toEqual(['llm_call', 'agent_step', 'agent_step']);
  });
});

describe('normalizeSpans: calls', () => {
  it('Claude Code llm_request: exclusive usage, raw finish reason, request id, has_tool_call', () => {
    const c = normalizeSpans(
      [
        span({
          name: 'claude_code.llm_request',
          attributes: {
            'session.id': 'S',
            model: 'claude-opus-4-6[1m]',
            'gen_ai.system': 'anthropic',
            input_tokens: 2,
            output_tokens: 1200,
            cache_read_tokens: 84562,
            cache_creation_tokens: 7096,
            stop_reason: 'tool_use',
            'gen_ai.response.finish_reasons': ['tool_use'],
            request_id: 'req_1',
            'response.has_tool_call': true,
          },
        }),
      ],
      CTX,
    ).normalized.calls[0];
    expect(c).toMatchObject({
      producer: 'claude_code',
      provider: 'anthropic',
      contextTokens: 91660,
      usageRule: 'exclusive_producer',
      contextWindow: 1_000_000,
      windowSource: 'model_id',
      finishReasonRaw: 'tool_use',
      finishClass: 'tool_call',
      outputToolCall: true,
      requestId: 'req_1',
      runId: 'S',
    });
  });
  it('window correction and overrides come from the context', () => {
    const s = span({
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.usage.input_tokens': 150_000,
      },
    });
    expect(normalizeSpans([s], CTX).normalized.calls[0]).toMatchObject({
      contextWindow: 272_000,
      windowSource: 'inferred',
    });
    const o = normalizeSpans([s], {
      ...CTX,
      windowOverrides: [{ model: 'gpt-4*', window: 300_000 }],
    });
    expect(o.normalized.calls[0]).toMatchObject({
      contextWindow: 300_000,
      windowSource: 'override',
    });
  });
  it('output cut off while calling a tool', () => {
    const c = normalizeSpans(
      [
        span({
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.response.finish_reasons': ['length'],
            'gen_ai.request.max_tokens': 4096,
            'gen_ai.output.messages': JSON.stringify([
              {
                role: 'assistant',
                parts: [{ type: 'tool_call', name: 'write_file', arguments: '{"pa' }],
              },
            ]),
          },
        }),
      ],
      CTX,
    ).normalized.calls[0];
    expect(c).toMatchObject({
      finishClass: 'output_limit',
      outputToolCall: true,
      outputToolName: 'write_file',
      maxOutputTokens: 4096,
    });
  });
});

describe('normalizeSpans: tool results and the tool-span fallback for parts', () => {
  it('Claude Code tool spans (result_tokens) join the next call of the stream', () => {
    const attrs = { 'session.id': 'S' };
    const call1 = span({
      name: 'claude_code.llm_request',
      startTimeUnixNano: '100',
      endTimeUnixNano: '200',
      attributes: { ...attrs, input_tokens: 10 },
    });
    const tool = span({
      name: 'claude_code.tool',
      startTimeUnixNano: '210',
      endTimeUnixNano: '300',
      attributes: { ...attrs, tool_name: 'Read', tool_use_id: 'toolu_1', result_tokens: 5000 },
    });
    const exec = span({
      name: 'claude_code.tool.execution',
      startTimeUnixNano: '220',
      endTimeUnixNano: '290',
      attributes: { ...attrs, tool_use_id: 'toolu_1' },
    });
    const call2 = span({
      name: 'claude_code.llm_request',
      startTimeUnixNano: '400',
      endTimeUnixNano: '500',
      attributes: { ...attrs, input_tokens: 10 },
    });
    const b = normalizeSpans([call2, tool, exec, call1], CTX);
    expect(b.normalized.toolResults).toEqual([
      expect.objectContaining({
        toolName: 'Read',
        toolCallId: 'toolu_1',
        resultSize: 5000,
        sizeUnit: 'tokens',
        atNs: '300',
        streamKey: 'S|main',
        source: 'claude_code_span',
      }),
    ]);
    const [c2, c1] = b.normalized.calls;
    expect(c1?.parts).toBeNull();
    expect(c2?.parts).toEqual({
      unit: 'tokens',
      total: null,
      system: null,
      tools: { Read: 5000 },
      source: 'tool_spans',
    });
  });
  it('semconv execute_tool with gen_ai.tool.call.result sizes in chars', () => {
    const b = normalizeSpans(
      [
        span({
          name: 'execute_tool search',
          endTimeUnixNano: '10',
          attributes: {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': 'search',
            'gen_ai.tool.call.id': 'c1',
            'gen_ai.tool.call.result': 'abcdef',
          },
        }),
        span({
          name: 'chat',
          startTimeUnixNano: '20',
          attributes: { 'gen_ai.operation.name': 'chat' },
        }),
      ],
      CTX,
    );
    expect(b.normalized.toolResults[0]).toMatchObject({
      toolName: 'search',
      resultSize: 6,
      sizeUnit: 'chars',
    });
    expect(b.normalized.calls[0]?.parts).toMatchObject({
      unit: 'chars',
      tools: { search: 6 },
      source: 'tool_spans',
    });
  });
  it('message content wins over tool spans', () => {
    const b = normalizeSpans(
      [
        span({
          name: 'execute_tool search',
          endTimeUnixNano: '10',
          attributes: {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': 'search',
            'gen_ai.tool.call.result': 'abcdef',
          },
        }),
        span({
          name: 'chat',
          startTimeUnixNano: '20',
          attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.input.messages': '[]' },
        }),
      ],
      CTX,
    );
    expect(b.normalized.calls[0]?.parts?.source).toBe('messages');
  });
});

describe('normalizeSpans: content removal', () => {
  const attrs = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.usage.input_tokens': 9,
    'gen_ai.input.messages': JSON.stringify([
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'x', response: 'secret' }] },
    ]),
    'gen_ai.output.messages': '[]',
    'gen_ai.system_instructions': 'sys',
    'gen_ai.prompt.0.content': 'p',
    'gen_ai.completion.0.content': 'c',
    'llm.input_messages.0.message.content': 'm',
    'input.value': '{}',
    'output.value': '{}',
    'ai.prompt.messages': '[]',
    'ai.response.text': 't',
  };
  it('removes content attributes and content events when the workspace does not capture content; sizes stay', () => {
    const s = span({
      attributes: attrs,
      events: [
        { name: 'gen_ai.content.prompt', timeUnixNano: '1', attributes: { 'gen_ai.prompt': 'x' } },
      ],
    });
    const b = normalizeSpans([s], NO_CONTENT);
    expect(Object.keys(b.keep[0]?.attributes ?? {})).toEqual([
      'gen_ai.operation.name',
      'gen_ai.usage.input_tokens',
    ]);
    expect(b.keep[0]?.events[0]?.attributes).toEqual({});
    expect(b.normalized.calls[0]?.parts?.tools).toEqual({ unknown: 6 });
    expect(s.attributes['gen_ai.input.messages']).toBeDefined(); // input not mutated
  });
  it('keeps everything when content is captured', () => {
    const b = normalizeSpans([span({ attributes: attrs })], CTX);
    expect(Object.keys(b.keep[0]?.attributes ?? {})).toHaveLength(Object.keys(attrs).length);
  });
});

describe('normalizeSpans: @anthropic-ai/sdk 1.x own spans', () => {
  it('anthropic.messages.create: inclusive usage, cache_write spelling, stop reason, server-side compaction in usage', () => {
    const s = span({
      name: 'anthropic.messages.create',
      startTimeUnixNano: '10',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'claude-sonnet-4-5',
        'gen_ai.request.max_tokens': 1024,
        'gen_ai.conversation.id': 'conv',
        'gen_ai.usage.input_tokens': 5 + 900 + 100,
        'gen_ai.usage.cache_read.input_tokens': 900,
        'gen_ai.usage.cache_write.input_tokens': 100,
        'gen_ai.usage.output_tokens': 1024,
        'anthropic.message.stop_reason': 'max_tokens',
        'anthropic.usage.compaction.input_tokens': 160_000,
        'anthropic.usage.compaction.output_tokens': 3_000,
        'gen_ai.output.messages': JSON.stringify([
          {
            role: 'assistant',
            parts: [{ type: 'anthropic_compaction' }, { type: 'text', content: 'x' }],
          },
        ]),
      },
    });
    const b = normalizeSpans([s], CTX);
    expect(b.normalized.calls[0]).toMatchObject({
      producer: 'semconv',
      contextTokens: 1005,
      usageRule: 'inclusive',
      cacheWriteTokens: 100,
      finishReasonRaw: 'max_tokens',
      finishClass: 'output_limit',
      maxOutputTokens: 1024,
      compacted: true,
    });
    expect(b.normalized.compactions).toEqual([
      expect.objectContaining({
        evidence: 'message_part',
        atNs: '10',
        tokensBefore: 160_000,
        tokensAfter: 3_000,
        sourceKey: `usage:${s.traceId}:${s.spanId}`,
      }),
    ]);
  });
});
