/**
 * Ingest's copies of attributes keep `__proto__` an own key (issue 33): assigned to a plain
 * object it would become the copy's prototype, its entries hidden attributes.
 */
import { describe, expect, it } from 'vitest';
import { stripAttributes } from '../../../src/ingest/content.ts';
import { inputMessages } from '../../../src/ingest/message-text.ts';
import type { Attributes } from '../../../src/model/telemetry.ts';

/** Attributes as the decoders and JSON.parse make them: `__proto__` an own key. */
const withProto = (attrs: Attributes, proto: Attributes): Attributes =>
  Object.defineProperty({ ...attrs }, '__proto__', { value: proto, enumerable: true });

describe('attribute copies', () => {
  it('stripAttributes keeps __proto__ an own key of the copy', () => {
    const attrs = withProto(
      { 'gen_ai.request.model': 'gpt-4o', 'gen_ai.input.messages': '[]' },
      { 'gen_ai.usage.input_tokens': 777777 },
    );
    const stripped = stripAttributes(attrs);
    expect(stripped).not.toBe(attrs);
    expect(Object.getPrototypeOf(stripped)).toBe(Object.prototype);
    expect(stripped['gen_ai.usage.input_tokens']).toBeUndefined();
    expect(Object.keys(stripped)).toEqual(['gen_ai.request.model', '__proto__']);
  });

  it('OpenInference messages do not take their role from a __proto__ field', () => {
    // as read back from storage, where JSON.parse keeps `__proto__` an own key
    const keyed = JSON.parse(
      '{"llm.input_messages.0.message.content":"hi","llm.input_messages.0.__proto__":{"message.role":"evil"}}',
    ) as Record<string, unknown>;
    expect(inputMessages(keyed)?.map((m) => m.shown.role)).toEqual(['user']);
  });
});
