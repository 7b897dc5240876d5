import { describe, expect, it } from 'vitest';
import {
  classifyQuerySource,
  claudeCodeAgentId,
  conversationIdOf,
  sideCallOf,
  streamKeyOf,
} from '../../../src/ingest/conversation.ts';
import { normalizeSpans } from '../../../src/ingest/index.ts';
import type { Attributes } from '../../../src/model/telemetry.ts';
import { CTX, span } from './helpers.ts';

describe('conversationIdOf (conventions §9.2 order)', () => {
  it.each([
    ['gen_ai.conversation.id first', { 'gen_ai.conversation.id': 'c1', 'session.id': 's1' }, 'c1'],
    ['session.id (OpenInference, Claude Code)', { 'session.id': 's1' }, 's1'],
    ['Traceloop association', { 'traceloop.association.properties.session_id': 't1' }, 't1'],
    ['Vercel metadata sessionId', { 'ai.telemetry.metadata.sessionId': 'v1' }, 'v1'],
    ['Vercel metadata conversationId', { 'ai.telemetry.metadata.conversationId': 'v2' }, 'v2'],
    ['Vercel v7 context', { 'ai.settings.context.sessionId': 'v3' }, 'v3'],
    ['empty string is absent', { 'gen_ai.conversation.id': '', 'session.id': 's' }, 's'],
    ['nothing', {}, null],
  ] as Array<[string, Attributes, string | null]>)('%s', (_c, attrs, expected) => {
    expect(conversationIdOf(attrs)).toBe(expected);
  });
});

describe('query sources, side calls and sub-agents', () => {
  it.each([
    ['repl_main_thread', 'main'],
    ['repl_main_thread:outputStyle:custom', 'main'],
    ['main', 'main'],
    ['sdk', 'main'],
    ['agent:builtin:general-purpose', 'subagent'],
    ['agent:custom', 'subagent'],
    ['compact', 'side'],
    ['generate_session_title', 'side'],
    ['prompt_suggestion', 'side'],
  ] as const)('%s → %s', (qs, kind) => {
    expect(classifyQuerySource(qs)).toBe(kind);
  });
  it('sideCallOf takes query_source, then query_source_safe', () => {
    expect(sideCallOf({ query_source: 'compact' })).toBe('compact');
    expect(sideCallOf({ query_source_safe: 'generate_session_title' })).toBe(
      'generate_session_title',
    );
    expect(sideCallOf({ query_source: 'repl_main_thread' })).toBeNull();
    expect(sideCallOf({ query_source: 'agent:custom', agent_id: 'a1' })).toBeNull();
    expect(sideCallOf({})).toBeNull();
  });
  it('Claude Code agent identity', () => {
    expect(claudeCodeAgentId({ agent_id: 'a1' })).toBe('a1');
    expect(claudeCodeAgentId({ query_source: 'agent:custom', 'agent.name': 'reviewer' })).toBe(
      'reviewer',
    );
    expect(claudeCodeAgentId({ query_source: 'repl_main_thread' })).toBeNull();
  });
  it('stream key', () => {
    expect(streamKeyOf('c', null)).toBe('c|main');
    expect(streamKeyOf('c', 'a1')).toBe('c|a1');
  });
});

describe('grouping inside a span batch', () => {
  const T = 'b'.repeat(32);
  it('falls back to the trace id, flagged synthetic', () => {
    const c = normalizeSpans(
      [
        span({
          traceId: T,
          attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': 1 },
        }),
      ],
      CTX,
    ).normalized.calls[0];
    expect(c).toMatchObject({
      conversationId: T,
      conversationSynthetic: true,
      streamKey: `${T}|main`,
      runId: T,
    });
  });
  it('inherits the conversation id from an ancestor, then from the resource', () => {
    const root = span({ traceId: T, spanId: '1'.repeat(16), attributes: { 'session.id': 'sess' } });
    const child = span({
      traceId: T,
      parentSpanId: root.spanId,
      attributes: { 'openinference.span.kind': 'LLM', 'llm.token_count.prompt': 5 },
    });
    expect(normalizeSpans([root, child], CTX).normalized.calls[0]).toMatchObject({
      conversationId: 'sess',
      conversationSynthetic: false,
    });
    const viaResource = span({
      resource: { 'session.id': 'r1' },
      attributes: { 'gen_ai.operation.name': 'chat' },
    });
    expect(normalizeSpans([viaResource], CTX).normalized.calls[0]?.conversationId).toBe('r1');
  });
  it('a nested agent with a different gen_ai.agent.id is a sub-agent stream; the outermost is main', () => {
    const outer = span({
      traceId: T,
      spanId: '1'.repeat(16),
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.id': 'planner',
        'gen_ai.conversation.id': 'c',
      },
    });
    const mainCall = span({
      traceId: T,
      parentSpanId: outer.spanId,
      attributes: { 'gen_ai.operation.name': 'chat' },
    });
    const inner = span({
      traceId: T,
      spanId: '2'.repeat(16),
      parentSpanId: outer.spanId,
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': 'researcher' },
    });
    const subCall = span({
      traceId: T,
      parentSpanId: inner.spanId,
      attributes: { 'gen_ai.operation.name': 'chat' },
    });
    const calls = normalizeSpans([outer, mainCall, inner, subCall], CTX).normalized.calls;
    expect(calls.map((c) => c.streamKey)).toEqual(['c|main', 'c|researcher']);
  });
  it('Claude Code: session is the run; agent_id separates sub-agents; query_source marks side calls', () => {
    const base = { 'session.id': 'S', 'span.type': 'llm_request', input_tokens: 1 };
    const calls = normalizeSpans(
      [
        span({ traceId: '1'.repeat(32), name: 'claude_code.llm_request', attributes: base }),
        span({
          traceId: '2'.repeat(32),
          name: 'claude_code.llm_request',
          attributes: { ...base, agent_id: 'sub1' },
        }),
        span({
          traceId: '3'.repeat(32),
          name: 'claude_code.llm_request',
          attributes: { ...base, query_source: 'generate_session_title' },
        }),
      ],
      CTX,
    ).normalized.calls;
    expect(calls.map((c) => [c.runId, c.streamKey, c.sideCall])).toEqual([
      ['S', 'S|main', null],
      ['S', 'S|sub1', null],
      ['S', 'S|main', 'generate_session_title'],
    ]);
  });
});
