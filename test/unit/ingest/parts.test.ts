import { describe, expect, it } from 'vitest';
import { contentSize, resultAttrSize } from '../../../src/ingest/attrs.ts';
import { analyzeContent } from '../../../src/ingest/parts.ts';
import type { Attributes, AttrValue } from '../../../src/model/telemetry.ts';

const big = 'x'.repeat(1000);

describe('parts from each message format (conventions §9.6, §9.7)', () => {
  it('semconv gen_ai.input.messages + gen_ai.system_instructions; tool name joined through the call id', () => {
    const a: Attributes = {
      'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: 'You are helpful.' }]),
      'gen_ai.input.messages': JSON.stringify([
        { role: 'user', parts: [{ type: 'text', content: 'hi' }] },
        {
          role: 'assistant',
          parts: [{ type: 'tool_call', id: 'c1', name: 'read_file', arguments: { p: 1 } }],
        },
        { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: big }] },
      ]),
      'gen_ai.output.messages': JSON.stringify([
        {
          role: 'assistant',
          parts: [{ type: 'tool_call', id: 'c2', name: 'grep', arguments: {} }],
        },
      ]),
    };
    const r = analyzeContent(a);
    expect(r.parts).toEqual({
      unit: 'chars',
      system: 16,
      tools: { read_file: 1000 },
      total: 16 + 2 + 7 + 9 + 1000,
      source: 'messages',
    });
    expect(r.outputToolCall).toBe(true);
    expect(r.outputToolName).toBe('grep');
  });
  it('semconv system role inside input messages counts as system', () => {
    const r = analyzeContent({
      'gen_ai.input.messages': JSON.stringify([
        { role: 'system', parts: [{ type: 'text', content: 'sys' }] },
        { role: 'user', parts: [{ type: 'text', content: 'q' }] },
      ]),
    });
    expect(r.parts).toMatchObject({ system: 3, total: 4 });
  });
  it('OpenInference llm.input_messages.N.* with contents and tool_call_id', () => {
    const r = analyzeContent({
      'llm.input_messages.0.message.role': 'system',
      'llm.input_messages.0.message.content': 'system!',
      'llm.input_messages.1.message.role': 'user',
      'llm.input_messages.1.message.contents.0.message_content.type': 'text',
      'llm.input_messages.1.message.contents.0.message_content.text': 'question',
      'llm.input_messages.2.message.role': 'assistant',
      'llm.input_messages.2.message.tool_calls.0.tool_call.id': 'call_1',
      'llm.input_messages.2.message.tool_calls.0.tool_call.function.name': 'web_search',
      'llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments': '{}',
      'llm.input_messages.10.message.role': 'tool',
      'llm.input_messages.10.message.tool_call_id': 'call_1',
      'llm.input_messages.10.message.content': big,
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'final_answer',
    });
    expect(r.parts).toMatchObject({
      system: 7,
      tools: { web_search: 1000 },
      total: 7 + 8 + 2 + 10 + 1000,
    });
    expect(r.outputToolName).toBe('final_answer');
  });
  it('Traceloop legacy gen_ai.prompt.N.* (OpenAI tool_call_id) and completion tool calls', () => {
    const r = analyzeContent({
      'gen_ai.prompt.0.role': 'system',
      'gen_ai.prompt.0.content': 'sys prompt',
      'gen_ai.prompt.1.role': 'assistant',
      'gen_ai.prompt.1.tool_calls.0.id': 'call_w',
      'gen_ai.prompt.1.tool_calls.0.name': 'helm_list_releases',
      'gen_ai.prompt.1.tool_calls.0.arguments': '{}',
      'gen_ai.prompt.2.role': 'tool',
      'gen_ai.prompt.2.tool_call_id': 'call_w',
      'gen_ai.prompt.2.content': big,
      'gen_ai.completion.0.tool_calls.0.name': 'helm_get_release',
    });
    expect(r.parts).toMatchObject({ system: 10, tools: { helm_list_releases: 1000 } });
    expect(r.outputToolName).toBe('helm_get_release');
  });
  it('Traceloop legacy Anthropic: tool_result blocks JSON-dumped in .content', () => {
    const r = analyzeContent({
      'gen_ai.prompt.0.role': 'assistant',
      'gen_ai.prompt.0.content': JSON.stringify([
        { type: 'tool_use', id: 'toolu_1', name: 'Read', input: {} },
      ]),
      'gen_ai.prompt.1.role': 'user',
      'gen_ai.prompt.1.content': JSON.stringify([
        { type: 'tool_result', tool_use_id: 'toolu_1', content: big },
      ]),
    });
    expect(r.parts?.tools).toEqual({ Read: 1000 });
    expect(r.parts?.system).toBe(0);
  });
  it('Vercel ai.prompt.messages: tool-result names inline', () => {
    const r = analyzeContent({
      'ai.prompt.messages': JSON.stringify([
        { role: 'system', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 't1',
              toolName: 'weather',
              output: { type: 'text', value: big },
            },
          ],
        },
      ]),
      'ai.response.toolCalls': JSON.stringify([
        { toolCallId: 't2', toolName: 'search', args: '{}' },
      ]),
    });
    expect(r.parts).toMatchObject({ system: 8, tools: { weather: 1000 }, total: 8 + 2 + 1000 });
    expect(r.outputToolName).toBe('search');
  });
  it('OpenInference raw input.value (Anthropic request with top-level system)', () => {
    const r = analyzeContent({
      'input.value': JSON.stringify({
        system: 'sys',
        messages: [
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 'u1', name: 'Bash', input: { c: 'ls' } }],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'u1', content: 'abc' }] },
        ],
      }),
    });
    expect(r.parts).toMatchObject({ system: 3, tools: { Bash: 3 } });
  });
  it('unresolvable tool result ids are attributed to "unknown"', () => {
    const r = analyzeContent({
      'gen_ai.input.messages': JSON.stringify([
        { role: 'tool', parts: [{ type: 'tool_call_response', id: 'zz', response: 'r' }] },
      ]),
    });
    expect(r.parts?.tools).toEqual({ unknown: 1 });
  });
  it('results without call ids (OpenInference LangChain) take the names of the latest calls, in order', () => {
    const oi = (i: number, k: string) => `llm.input_messages.${i}.message.${k}`;
    const r = analyzeContent({
      [oi(0, 'role')]: 'assistant',
      [oi(0, 'tool_calls.0.tool_call.function.name')]: 'read_file',
      [oi(0, 'tool_calls.1.tool_call.function.name')]: 'git_log',
      [oi(1, 'role')]: 'tool',
      [oi(1, 'content')]: 'abcd',
      [oi(2, 'role')]: 'tool',
      [oi(2, 'content')]: 'ef',
      [oi(3, 'role')]: 'assistant',
      [oi(3, 'tool_calls.0.tool_call.function.name')]: 'list_dir',
      [oi(4, 'role')]: 'tool',
      [oi(4, 'content')]: 'g',
      // a result beyond the calls it answers stays unknown
      [oi(5, 'role')]: 'tool',
      [oi(5, 'content')]: 'hij',
    });
    expect(r.parts?.tools).toEqual({ read_file: 4, git_log: 2, list_dir: 1, unknown: 3 });
  });
  it('no content: no parts', () => {
    expect(analyzeContent({ 'gen_ai.usage.input_tokens': 5 }).parts).toBeNull();
  });
  it('compaction parts in input and output', () => {
    const r = analyzeContent({
      'gen_ai.input.messages': JSON.stringify([
        { role: 'user', parts: [{ type: 'compaction', id: 'cmp_1', content: 'summary' }] },
      ]),
      'gen_ai.output.messages': JSON.stringify([
        { role: 'assistant', parts: [{ type: 'compaction', content: 'new summary!' }] },
      ]),
    });
    expect(r.inputCompaction).toEqual({ id: 'cmp_1', size: 7, text: 'summary' });
    expect(r.outputCompaction).toEqual({ id: null, size: 12, text: 'new summary!' });
  });
});

describe('content sizes as the model reads them', () => {
  it.each([
    ['plain string', 'abc', 3],
    [
      'Anthropic text blocks',
      [
        { type: 'text', text: 'abcd' },
        { type: 'text', text: 'ef' },
      ],
      6,
    ],
    ['a single text block', { type: 'text', text: 'abcd' }, 4],
    ['MCP result', { content: [{ type: 'text', text: 'abcde' }], isError: false }, 5],
    ['JSON value', { a: 1 }, 7],
    ['null', null, 0],
  ] as Array<[string, unknown, number]>)('contentSize: %s', (_c, v, n) => {
    expect(contentSize(v)).toBe(n);
  });
  it.each([
    ['Vercel stringifies a string output', JSON.stringify('line\n"quoted"'), 13],
    ['content blocks as JSON', JSON.stringify([{ type: 'text', text: 'abc' }]), 3],
    ['plain text', 'plain text', 10],
    ['unparsable JSON-looking text', '{not json', 9],
    ['structured value', [{ type: 'text', text: 'ab' }], 2],
  ] as Array<[string, AttrValue, number]>)('resultAttrSize: %s', (_c, v, n) => {
    expect(resultAttrSize(v)).toBe(n);
  });
  it('Anthropic SDK tool_call_response blocks are sized by their text', () => {
    const r = analyzeContent({
      'gen_ai.input.messages': JSON.stringify([
        {
          role: 'assistant',
          parts: [{ type: 'tool_call', id: 't1', name: 'read_file', arguments: {} }],
        },
        {
          role: 'user',
          parts: [
            { type: 'tool_call_response', id: 't1', response: [{ type: 'text', text: big }] },
          ],
        },
      ]),
    });
    expect(r.parts?.tools).toEqual({ read_file: 1000 });
  });
});
