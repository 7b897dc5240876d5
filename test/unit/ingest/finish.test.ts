import { describe, expect, it } from 'vitest';
import { classifyFinishReason, readFinishReason } from '../../../src/ingest/finish.ts';
import type { Attributes } from '../../../src/model/telemetry.ts';

describe('classifyFinishReason (conventions §9.4)', () => {
  it.each([
    ['model_context_window_exceeded', 'context_overflow'],
    ['length', 'output_limit'],
    ['max_tokens', 'output_limit'],
    ['MAX_TOKENS', 'output_limit'],
    ['max_output_tokens', 'output_limit'],
    ['tool_use', 'tool_call'],
    ['tool_calls', 'tool_call'],
    ['tool_call', 'tool_call'],
    ['tool-calls', 'tool_call'],
    ['function_call', 'tool_call'],
    ['stop', 'stop'],
    ['STOP', 'stop'],
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'paused'],
    ['refusal', 'refusal'],
    ['content_filter', 'refusal'],
    ['content-filter', 'refusal'],
    ['compaction', 'compaction'],
    ['error', 'error'],
    ['other', 'other'],
    ['unknown', 'other'],
    ['something_new', 'other'],
  ])('%s → %s', (raw, cls) => {
    expect(classifyFinishReason(raw)).toBe(cls);
  });
  it('null and empty are unknown', () => {
    expect(classifyFinishReason(null)).toBeNull();
    expect(classifyFinishReason('  ')).toBeNull();
  });
});

describe('readFinishReason: first source present wins', () => {
  const none = () => undefined;
  it.each([
    ['array attribute', { 'gen_ai.response.finish_reasons': ['length', 'stop'] }, 'length'],
    ['JSON-string array (kagent)', { 'gen_ai.response.finish_reasons': '["stop"]' }, 'stop'],
    ['plain string', { 'gen_ai.response.finish_reasons': 'tool_use' }, 'tool_use'],
    ['OpenInference', { 'llm.finish_reason': 'max_tokens' }, 'max_tokens'],
    ['Claude Code stop_reason', { stop_reason: 'pause_turn' }, 'pause_turn'],
    [
      'Traceloop legacy completion',
      { 'gen_ai.completion.0.finish_reason': 'tool_calls' },
      'tool_calls',
    ],
    ['Vercel legacy', { 'ai.response.finishReason': 'tool-calls' }, 'tool-calls'],
    [
      'order: semconv before llm.finish_reason',
      { 'gen_ai.response.finish_reasons': ['stop'], 'llm.finish_reason': 'length' },
      'stop',
    ],
    ['nothing', {}, null],
  ] as Array<[string, Attributes, string | null]>)('%s', (_c, attrs, expected) => {
    expect(readFinishReason(attrs, undefined, none)).toBe(expected);
  });
  it('deprecated output message finish_reason, then raw output', () => {
    expect(
      readFinishReason({}, [{ role: 'assistant', parts: [], finish_reason: 'length' }], none),
    ).toBe('length');
    expect(readFinishReason({}, undefined, () => ({ choices: [{ finish_reason: 'stop' }] }))).toBe(
      'stop',
    );
    expect(
      readFinishReason({}, undefined, () => ({
        incomplete_details: { reason: 'max_output_tokens' },
      })),
    ).toBe('max_output_tokens');
    expect(readFinishReason({}, undefined, () => ({ stop_reason: 'end_turn' }))).toBe('end_turn');
  });
});
