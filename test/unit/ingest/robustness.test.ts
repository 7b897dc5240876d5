/** Bad input never crashes ingest: any attribute value under any known key normalizes without throwing. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeLogs, normalizeSpans, normalizeTranscript } from '../../../src/ingest/index.ts';
import type { AttrValue } from '../../../src/model/telemetry.ts';
import { CTX, NO_CONTENT, log, span } from './helpers.ts';

const KEYS = [
  'gen_ai.operation.name',
  'gen_ai.conversation.id',
  'gen_ai.usage.input_tokens',
  'gen_ai.usage.cache_read.input_tokens',
  'gen_ai.usage.cache_creation.input_tokens',
  'gen_ai.response.finish_reasons',
  'gen_ai.input.messages',
  'gen_ai.output.messages',
  'gen_ai.system_instructions',
  'gen_ai.conversation.compacted',
  'gen_ai.agent.id',
  'gen_ai.prompt.0.content',
  'gen_ai.prompt.0.role',
  'gen_ai.prompt.x.role',
  'llm.input_messages.0.message.role',
  'llm.input_messages.0.message.tool_call_id',
  'llm.input_messages.1.message.contents.0.message_content.text',
  'llm.invocation_parameters',
  'openinference.span.kind',
  'ai.prompt.messages',
  'ai.response.toolCalls',
  'ai.response.providerMetadata',
  'input.value',
  'output.value',
  'session.id',
  'query_source',
  'agent_id',
  'input_tokens',
  'result_tokens',
  'anthropic.usage.compaction.input_tokens',
  'compaction.tokens_before',
  'trigger',
];
const NAMES = [
  'chat',
  'claude_code.llm_request',
  'claude_code.tool',
  'compact_messages',
  'ai.generateText.doGenerate',
  'execute_tool x',
  'x',
];

const jsonish = fc.oneof(
  fc.json(),
  fc.constantFrom(
    '[',
    '{"messages": 3}',
    '[{"role":"tool","parts":[{"type":"tool_call_response"}]}]',
    '[{"parts":null}]',
    '["stop"]',
  ),
);
const value: fc.Arbitrary<AttrValue> = fc.oneof(
  fc.string(),
  jsonish,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue() as fc.Arbitrary<AttrValue>,
);
const attrs = fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 12 });

describe('robustness', () => {
  it('normalizeSpans never throws', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ name: fc.constantFrom(...NAMES), attributes: attrs, parent: fc.boolean() }),
          { maxLength: 8 },
        ),
        fc.boolean(),
        (specs, capture) => {
          const spans = specs.map((s, i) =>
            span({
              spanId: String(i + 1).padStart(16, '0'),
              parentSpanId: s.parent && i > 0 ? String(i).padStart(16, '0') : null,
              name: s.name,
              attributes: s.attributes,
            }),
          );
          const r = normalizeSpans(spans, capture ? CTX : NO_CONTENT);
          expect(r.keep.length + r.dropped).toBe(spans.length);
        },
      ),
      { numRuns: 400 },
    );
  });
  it('normalizeLogs never throws', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            eventName: fc.constantFrom(
              'api_request',
              'claude_code.compaction',
              'tool_result',
              'gen_ai.choice',
              'gen_ai.tool.message',
              'x',
            ),
            attributes: attrs,
            body: value,
          }),
          { maxLength: 8 },
        ),
        (specs) => {
          const r = normalizeLogs(
            specs.map((s) => log({ ...s, traceId: 'a'.repeat(32), spanId: 'b'.repeat(16) })),
            CTX,
          );
          expect(r.keep.length + r.dropped).toBe(specs.length);
        },
      ),
      { numRuns: 300 },
    );
  });
  it('normalizeTranscript never throws', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string(),
            fc.json(),
            fc
              .record({
                type: fc.constantFrom('assistant', 'user', 'system'),
                message: fc.jsonValue(),
                isSidechain: fc.boolean(),
                subtype: fc.constant('compact_boundary'),
                compactMetadata: fc.jsonValue(),
              })
              .map((o) => JSON.stringify(o)),
          ),
          { maxLength: 10 },
        ),
        (lines) => {
          normalizeTranscript(lines.join('\n'), CTX);
        },
      ),
      { numRuns: 300 },
    );
  });
});
