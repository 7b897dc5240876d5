/**
 * An attribute named `__proto__` is an ordinary attribute (issue 33): sent as a kvlist, its
 * entries once became the attribute object's prototype, hidden attributes the normalizer read
 * (a stored call took its model and 777,777 input tokens from one). Through the real route,
 * protobuf and JSON, into the store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { hex, jsonRequest, jsonSpan, post, protobufRequest } from '../../helpers/otlp-bodies.ts';

let server: TestServer;
beforeAll(async () => {
  // keepRawSpans: the test reads the stored span's attributes
  server = await startTestServer({ loops: false, config: { keepRawSpans: true } });
});
afterAll(async () => {
  await server?.close();
});

const EVIL = {
  kvlistValue: {
    values: [
      { key: 'gen_ai.request.model', value: { stringValue: 'evil' } },
      { key: 'gen_ai.usage.input_tokens', value: { intValue: '777777' } },
      // the span has none of its own: today's code would store this one
      { key: 'gen_ai.response.model', value: { stringValue: 'evil' } },
    ],
  },
};

/** A GenAI span with its own model and tokens, and a `__proto__` kvlist after them. */
function protoSpan(traceId: string) {
  const span = jsonSpan({ traceId });
  const attributes = [...span.attributes, { key: '__proto__', value: EVIL }];
  // jsonSpan's type knows only scalar attribute values; protobufRequest encodes any AnyValue
  return { ...span, attributes } as unknown as typeof span;
}

const BODIES = {
  json: (traceId: string) => ({
    body: JSON.stringify(jsonRequest([protoSpan(traceId)])),
    type: 'application/json',
  }),
  protobuf: (traceId: string) => ({
    body: protobufRequest([protoSpan(traceId)]),
    type: 'application/x-protobuf',
  }),
};

describe('an attribute named __proto__', () => {
  it.each(['json', 'protobuf'] as const)(
    'is stored as an ordinary attribute from a %s body; the call keeps the span’s own model and tokens',
    async (encoding) => {
      const traceId = hex(16);
      const { body, type } = BODIES[encoding](traceId);
      const response = await post(`${server.url}/v1/traces`, body, { 'content-type': type });
      expect(response.status).toBe(200);

      const call = await server.store.db
        .selectFrom('llm_calls')
        .select(['request_model', 'response_model', 'input_tokens_raw'])
        .where('trace_id', '=', traceId)
        .executeTakeFirstOrThrow();
      expect(call.request_model).toBe('gpt-4o');
      expect(call.response_model).not.toBe('evil');
      expect(Number(call.input_tokens_raw)).toBe(1200);

      const span = await server.store.db
        .selectFrom('spans')
        .select('attributes')
        .where('trace_id', '=', traceId)
        .executeTakeFirstOrThrow();
      const attributes = span.attributes as Record<string, unknown>;
      expect(Object.keys(attributes)).toContain('__proto__');
      expect(Object.getOwnPropertyDescriptor(attributes, '__proto__')?.value).toEqual({
        'gen_ai.request.model': 'evil',
        'gen_ai.usage.input_tokens': 777777,
        'gen_ai.response.model': 'evil',
      });
      expect(attributes['gen_ai.request.model']).toBe('gpt-4o');
    },
  );
});
