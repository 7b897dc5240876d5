import { describe, expect, it } from 'vitest';
import { normalizeLogs } from '../../../src/ingest/index.ts';
import { CTX, NO_CONTENT, log } from './helpers.ts';

const S = { 'session.id': 'sess-1', 'prompt.id': 'p1' };

describe('normalizeLogs: Claude Code events', () => {
  it('keeps claude_code.* and gen_ai.* events, drops others', () => {
    const b = normalizeLogs(
      [
        log({ eventName: 'api_request', body: 'claude_code.api_request', attributes: S }),
        log({ eventName: 'claude_code.user_prompt', attributes: S }),
        log({
          eventName: 'gen_ai.client.inference.operation.details',
          scope: { name: 'x', version: '' },
        }),
        log({ eventName: '', body: 'GET / 200', scope: { name: 'http', version: '' } }),
      ],
      CTX,
    );
    expect(b.keep).toHaveLength(3);
    expect(b.dropped).toBe(1);
  });
  it('api_request → a call ending at the record time, starting duration_ms earlier; exclusive usage', () => {
    const b = normalizeLogs(
      [
        log({
          eventName: 'api_request',
          body: 'claude_code.api_request',
          timeUnixNano: '10000000000',
          attributes: {
            ...S,
            model: 'claude-sonnet-4-5',
            input_tokens: 2,
            cache_read_tokens: 84562,
            cache_creation_tokens: 7096,
            output_tokens: 100,
            request_id: 'req_1',
            duration_ms: 1500,
            query_source: 'repl_main_thread',
          },
        }),
      ],
      CTX,
    );
    expect(b.normalized.calls[0]).toMatchObject({
      producer: 'claude_code_log',
      requestId: 'req_1',
      conversationId: 'sess-1',
      runId: 'sess-1',
      streamKey: 'sess-1|main',
      startNs: '8500000000',
      endNs: '10000000000',
      contextTokens: 91660,
      usageRule: 'exclusive_producer',
      contextWindow: 200_000,
      sideCall: null,
    });
    expect(b.normalized.calls[0]?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(b.normalized.calls[0]?.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(b.sideCalls).toEqual([]);
  });
  it('side calls are reported by request id; a compact one is not a second compaction (the compaction event is); sub-agents get their own stream', () => {
    const b = normalizeLogs(
      [
        log({
          eventName: 'api_request',
          attributes: {
            ...S,
            request_id: 'r_t',
            query_source: 'generate_session_title',
            input_tokens: 1,
          },
        }),
        log({
          eventName: 'api_request',
          timeUnixNano: '7',
          attributes: {
            ...S,
            request_id: 'r_c',
            query_source: 'compact',
            input_tokens: 3,
            cache_read_tokens: 170_000,
          },
        }),
        log({
          eventName: 'api_request',
          attributes: {
            ...S,
            request_id: 'r_a',
            query_source: 'agent:builtin:Explore',
            agent_id: 'ag1',
            input_tokens: 1,
          },
        }),
      ],
      CTX,
    );
    expect(b.sideCalls).toEqual([
      { requestId: 'r_t', reason: 'generate_session_title' },
      { requestId: 'r_c', reason: 'compact' },
    ]);
    expect(b.normalized.calls.map((c) => [c.sideCall, c.streamKey])).toEqual([
      ['generate_session_title', 'sess-1|main'],
      ['compact', 'sess-1|main'],
      [null, 'sess-1|ag1'],
    ]);
    // the compaction is counted once, from its `compaction` event (real 2.1.197 data stored it twice)
    expect(b.normalized.compactions).toEqual([]);
  });
  it('compaction event → a compaction with trigger and pre/post tokens; failed ones are skipped', () => {
    const b = normalizeLogs(
      [
        log({
          eventName: 'compaction',
          body: 'claude_code.compaction',
          timeUnixNano: '42',
          attributes: {
            ...S,
            trigger: 'auto',
            pre_tokens: 170251,
            post_tokens: 12000,
            success: true,
          },
        }),
        log({
          eventName: 'claude_code.compaction',
          timeUnixNano: '43',
          attributes: { ...S, trigger: 'manual', success: 'false' },
        }),
      ],
      CTX,
    );
    expect(b.normalized.compactions).toEqual([
      expect.objectContaining({
        evidence: 'claude_code_event',
        kind: 'summarize',
        trigger: 'auto',
        tokensBefore: 170251,
        tokensAfter: 12000,
        atNs: '42',
        streamKey: 'sess-1|main',
        sourceKey: 'log:sess-1:42',
      }),
    ]);
  });
  it('tool_result → a tool result in bytes', () => {
    const b = normalizeLogs(
      [
        log({
          eventName: 'tool_result',
          timeUnixNano: '9',
          attributes: {
            ...S,
            tool_name: 'Read',
            tool_use_id: 'toolu_1',
            tool_result_size_bytes: 20480,
            success: 'true',
          },
        }),
      ],
      CTX,
    );
    expect(b.normalized.toolResults).toEqual([
      expect.objectContaining({
        toolName: 'Read',
        toolCallId: 'toolu_1',
        resultSize: 20480,
        sizeUnit: 'bytes',
        atNs: '9',
        source: 'claude_code_log',
        conversationId: 'sess-1',
      }),
    ]);
  });
  it('re-sending the same records gives the same ids and keys', () => {
    const recs = [
      log({ eventName: 'api_request', attributes: { ...S, request_id: 'r', input_tokens: 1 } }),
      log({ eventName: 'tool_result', attributes: { ...S, tool_use_id: 't', tool_name: 'x' } }),
    ];
    const a = normalizeLogs(recs, CTX).normalized;
    const b = normalizeLogs(recs, CTX).normalized;
    expect(b).toEqual(a);
  });
  it('without content capture, prompts and tool inputs are removed from kept records', () => {
    const b = normalizeLogs(
      [
        log({
          eventName: 'user_prompt',
          body: 'claude_code.user_prompt',
          attributes: { ...S, prompt: 'my secret', prompt_length: 9 },
        }),
        log({
          eventName: 'gen_ai.user.message',
          body: { content: 'hello' },
          scope: { name: 'x', version: '' },
        }),
        log({
          eventName: 'gen_ai.assistant.message',
          body: {
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'read', arguments: '{"p":"/etc"}' } },
            ],
          },
        }),
        log({ eventName: 'gen_ai.tool.message', body: { id: 'c1', content: 'file text' } }),
        log({ eventName: 'gen_ai.content.prompt', body: 'raw prompt text' }),
      ],
      NO_CONTENT,
    );
    expect(b.keep[0]?.attributes).toEqual({ ...S, prompt_length: 9 });
    expect(b.keep[0]?.body).toBe('claude_code.user_prompt');
    // structure (ids, tool names) stays; content goes
    expect(b.keep[1]?.body).toEqual({});
    expect(b.keep[2]?.body).toEqual({
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read' } }],
    });
    expect(b.keep[3]?.body).toEqual({ id: 'c1' });
    expect(b.keep[4]?.body).toBeNull();
    // sizes were taken before removal
    expect(b.callContent).toEqual([]);
  });
});
