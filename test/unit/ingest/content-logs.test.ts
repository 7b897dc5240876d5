import { describe, expect, it } from 'vitest';
import { callContentFromLogs, normalizeLogs } from '../../../src/ingest/index.ts';
import { CTX, log } from './helpers.ts';

const ids = {
  traceId: 'e'.repeat(32),
  spanId: 'f'.repeat(16),
  scope: { name: '@opentelemetry/instrumentation-openai', version: '0.21.0' },
};

describe('message content sent as log records (semconv events)', () => {
  it('per-message events (instrumentation-openai chat completions) → parts and output tool call for the span', () => {
    const b = normalizeLogs(
      [
        log({ ...ids, eventName: 'gen_ai.system.message', body: { content: 'You are terse.' } }),
        log({ ...ids, eventName: 'gen_ai.user.message', body: { content: 'weather?' } }),
        log({
          ...ids,
          eventName: 'gen_ai.assistant.message',
          body: {
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'get_weather', arguments: '{}' },
              },
            ],
          },
        }),
        log({
          ...ids,
          eventName: 'gen_ai.tool.message',
          body: { id: 'call_1', content: 'x'.repeat(300) },
        }),
        log({
          ...ids,
          eventName: 'gen_ai.choice',
          body: {
            finish_reason: 'tool_calls',
            index: 0,
            message: {
              tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'get_time' } }],
            },
          },
        }),
      ],
      CTX,
    );
    expect(b.keep).toHaveLength(5);
    expect(b.callContent).toEqual([
      {
        traceId: ids.traceId,
        spanId: ids.spanId,
        parts: {
          unit: 'chars',
          system: 14,
          tools: { get_weather: 300 },
          total: 14 + 8 + 13 + 300,
          source: 'messages',
        },
        outputToolCall: true,
        outputToolName: 'get_time',
        finishReasonRaw: 'tool_calls',
        finishClass: 'tool_call',
      },
    ]);
  });
  it('content not captured: no parts, but the output tool call is still known', () => {
    const b = normalizeLogs(
      [
        log({ ...ids, eventName: 'gen_ai.user.message', body: {} }),
        log({
          ...ids,
          eventName: 'gen_ai.choice',
          body: { finish_reason: 'stop', index: 0, message: {} },
        }),
      ],
      CTX,
    );
    expect(b.callContent[0]).toMatchObject({
      parts: null,
      outputToolCall: false,
      finishReasonRaw: 'stop',
    });
  });
  it('gen_ai.client.inference.operation.details with structured input/output messages (Responses API path)', () => {
    const b = normalizeLogs(
      [
        log({
          ...ids,
          eventName: 'gen_ai.client.inference.operation.details',
          attributes: {
            'gen_ai.input.messages': [
              { role: 'user', parts: [{ type: 'text', content: 'hello' }] },
            ],
          },
        }),
        log({
          ...ids,
          eventName: 'gen_ai.client.inference.operation.details',
          attributes: {
            'gen_ai.output.messages': [
              {
                role: 'assistant',
                parts: [{ type: 'tool_call', id: 'c', name: 'search' }],
                finish_reason: 'tool_call',
              },
            ],
          },
        }),
      ],
      CTX,
    );
    expect(b.callContent[0]).toMatchObject({
      parts: { total: 5, system: 0, tools: {} },
      outputToolName: 'search',
      finishReasonRaw: 'tool_call',
    });
  });
  it('no content events: nothing to apply', () => {
    expect(
      normalizeLogs(
        [log({ eventName: 'claude_code.api_request', attributes: { 'session.id': 's' } })],
        CTX,
      ).callContent,
    ).toEqual([]);
  });
});

describe('callContentFromLogs on stored records', () => {
  it('computes event names itself', () => {
    const recs = [
      log({ ...ids, eventName: 'gen_ai.tool.message', body: { id: 'c', content: 'abc' } }),
    ];
    expect(callContentFromLogs(recs)[0]?.parts?.tools).toEqual({ unknown: 3 });
  });
});
