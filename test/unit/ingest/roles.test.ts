import { describe, expect, it } from 'vitest';
import { classifyRole, isCompactionName } from '../../../src/ingest/roles.ts';
import type { Attributes } from '../../../src/model/telemetry.ts';

const cases: Array<[string, string, Attributes, string, string]> = [
  // [case, span name, attributes, role, rule]
  ['semconv chat', 'chat gpt-4o', { 'gen_ai.operation.name': 'chat' }, 'llm_call', 'semconv'],
  [
    'semconv generate_content',
    'x',
    { 'gen_ai.operation.name': 'generate_content' },
    'llm_call',
    'semconv',
  ],
  [
    'semconv text_completion',
    'x',
    { 'gen_ai.operation.name': 'text_completion' },
    'llm_call',
    'semconv',
  ],
  [
    'OpenLLMetry llm_request op',
    'x',
    { 'gen_ai.operation.name': 'llm_request' },
    'llm_call',
    'semconv',
  ],
  [
    'semconv execute_tool',
    'execute_tool t',
    { 'gen_ai.operation.name': 'execute_tool' },
    'tool',
    'semconv',
  ],
  [
    'semconv invoke_agent',
    'invoke_agent',
    { 'gen_ai.operation.name': 'invoke_agent' },
    'agent_step',
    'semconv',
  ],
  [
    'Vercel v7 agent_step',
    'step 1',
    { 'gen_ai.operation.name': 'agent_step' },
    'agent_step',
    'semconv',
  ],
  [
    'OpenLLMetry execute_task',
    'x',
    { 'gen_ai.operation.name': 'execute_task' },
    'agent_step',
    'semconv',
  ],
  ['custom compaction op', 'x', { 'gen_ai.operation.name': 'compaction' }, 'compaction', 'semconv'],
  ['custom compact op', 'compact', { 'gen_ai.operation.name': 'compact' }, 'compaction', 'semconv'],
  ['embeddings', 'x', { 'gen_ai.operation.name': 'embeddings' }, 'other', 'semconv'],
  ['memory op', 'x', { 'gen_ai.operation.name': 'search_memory' }, 'other', 'semconv'],
  [
    'OpenInference LLM',
    'ChatCompletion',
    { 'openinference.span.kind': 'LLM' },
    'llm_call',
    'openinference',
  ],
  ['OpenInference TOOL', 'x', { 'openinference.span.kind': 'TOOL' }, 'tool', 'openinference'],
  [
    'OpenInference CHAIN',
    'x',
    { 'openinference.span.kind': 'CHAIN' },
    'agent_step',
    'openinference',
  ],
  [
    'OpenInference RETRIEVER',
    'x',
    { 'openinference.span.kind': 'RETRIEVER' },
    'other',
    'openinference',
  ],
  ['Traceloop tool kind', 'x.tool', { 'traceloop.span.kind': 'tool' }, 'tool', 'traceloop'],
  [
    'Traceloop workflow kind',
    'x',
    { 'traceloop.span.kind': 'workflow' },
    'agent_step',
    'traceloop',
  ],
  [
    'Traceloop llm.request.type',
    'openai.chat',
    { 'llm.request.type': 'chat' },
    'llm_call',
    'traceloop',
  ],
  ['Claude Code llm_request', 'claude_code.llm_request', {}, 'llm_call', 'claude_code'],
  ['Claude Code tool', 'claude_code.tool', {}, 'tool', 'claude_code'],
  ['Claude Code tool execution', 'claude_code.tool.execution', {}, 'tool', 'claude_code'],
  ['Claude Code interaction', 'claude_code.interaction', {}, 'agent_step', 'claude_code'],
  ['Vercel doGenerate', 'ai.generateText.doGenerate', {}, 'llm_call', 'vercel'],
  ['Vercel doStream', 'ai.streamText.doStream', {}, 'llm_call', 'vercel'],
  ['Vercel toolCall', 'ai.toolCall', {}, 'tool', 'vercel'],
  [
    'Vercel embeddings are not calls',
    'ai.embedMany.doEmbed',
    { 'ai.usage.tokens': 9 },
    'other',
    'vercel',
  ],
  [
    'Vercel root is an agent step',
    'ai.generateText',
    { 'ai.usage.promptTokens': 10 },
    'agent_step',
    'vercel',
  ],
  ['anthropic.chat by name', 'anthropic.chat', {}, 'llm_call', 'span_name'],
  ['compact_messages name', 'compact_messages', {}, 'compaction', 'span_name'],
  ['compact_events name', 'compact_events auto', {}, 'compaction', 'span_name'],
  ['redpanda.compaction name', 'redpanda.compaction', {}, 'compaction', 'span_name'],
  [
    'rule 5: name + token counts only',
    'my-llm',
    { 'gen_ai.usage.input_tokens': 5 },
    'llm_call',
    'usage_only',
  ],
  ['rule 5: llm.token_count', 'x', { 'llm.token_count.prompt': 5 }, 'llm_call', 'usage_only'],
  ['rule 5: ai.usage', 'x', { 'ai.usage.inputTokens': 5 }, 'llm_call', 'usage_only'],
  ['plain HTTP span', 'GET /', { 'http.request.method': 'GET' }, 'other', 'none'],
  [
    'op beats name',
    'anthropic.chat',
    { 'gen_ai.operation.name': 'execute_tool' },
    'tool',
    'semconv',
  ],
];

describe('classifyRole (conventions §9.1)', () => {
  it.each(cases)('%s', (_case, name, attrs, role, rule) => {
    expect(classifyRole(name, attrs)).toEqual({ role, rule });
  });
});

describe('isCompactionName', () => {
  it.each([
    ['compact', true],
    ['compaction', true],
    ['openclaw.compaction', true],
    ['history_compaction', true],
    ['compactor', false],
    ['impact', false],
    ['chat', false],
  ] as const)('%s → %s', (name, expected) => {
    expect(isCompactionName(name)).toBe(expected);
  });
});
