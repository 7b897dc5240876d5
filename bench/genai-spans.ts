/**
 * Realistic GenAI telemetry for benchmarks (conventions.md §1): agent runs of `invoke_agent`
 * → `chat` calls (semconv attributes, message content JSON of a few KB, cache tokens, finish
 * reasons) → `execute_tool` spans, plus an HTTP span per run that ingest drops.
 */
import { randomBytes } from 'node:crypto';
import { ExportTraceServiceRequest } from '../src/otlp/proto.ts';

type Value =
  | { stringValue: string }
  | { intValue: number }
  | { boolValue: boolean }
  | { arrayValue: { values: Value[] } };
const v = (value: string | number | boolean | string[]): Value =>
  Array.isArray(value)
    ? { arrayValue: { values: value.map((s) => ({ stringValue: s })) } }
    : typeof value === 'string'
      ? { stringValue: value }
      : typeof value === 'number'
        ? { intValue: value }
        : { boolValue: value };
const attrs = (record: Record<string, string | number | boolean | string[]>) =>
  Object.entries(record).map(([key, value]) => ({ key, value: v(value) }));

const filler = (n: number) => 'lorem ipsum dolor sit amet '.repeat(Math.ceil(n / 27)).slice(0, n);

export interface BenchSpan {
  traceId: Buffer;
  spanId: Buffer;
  parentSpanId?: Buffer;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: ReturnType<typeof attrs>;
}

/**
 * One agent run: 1 agent span, `calls` chat spans, a tool span after each call, 1 HTTP span.
 * With `cutOffLast` the last call stops on the output limit (an `output_cut_off` finding).
 */
export function agentRun(
  run: number,
  calls: number,
  baseNs: bigint,
  options: { cutOffLast?: boolean; content?: boolean } = {},
): BenchSpan[] {
  const content = options.content ?? true;
  const traceId = randomBytes(16);
  const root = randomBytes(8);
  const conversation = `bench-conv-${run}`;
  const spans: BenchSpan[] = [
    {
      traceId,
      spanId: root,
      name: 'invoke_agent researcher',
      kind: 1,
      startTimeUnixNano: baseNs.toString(),
      endTimeUnixNano: (baseNs + 60_000_000_000n).toString(),
      attributes: attrs({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'researcher',
        'gen_ai.conversation.id': conversation,
      }),
    },
  ];
  const messages: Array<{ role: string; parts: unknown[] }> = [
    { role: 'user', parts: [{ type: 'text', content: filler(400) }] },
  ];
  for (let i = 0; i < calls; i++) {
    const start = baseNs + BigInt(i) * 2_000_000_000n;
    const callId = `call_${run}_${i}`;
    spans.push({
      traceId,
      spanId: randomBytes(8),
      parentSpanId: root,
      name: 'chat gpt-4.1',
      kind: 3,
      startTimeUnixNano: start.toString(),
      endTimeUnixNano: (start + 1_500_000_000n).toString(),
      attributes: attrs({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4.1',
        'gen_ai.response.model': 'gpt-4.1-2025-04-14',
        'gen_ai.conversation.id': conversation,
        'gen_ai.usage.input_tokens': 3_000 + i * 1_200,
        'gen_ai.usage.cache_read.input_tokens': 2_000 + i * 1_100,
        'gen_ai.usage.output_tokens': 180,
        'gen_ai.response.finish_reasons': [
          i === calls - 1 ? (options.cutOffLast ? 'length' : 'stop') : 'tool_calls',
        ],
        ...(content
          ? {
              'gen_ai.system_instructions': JSON.stringify([
                { type: 'text', content: filler(1_200) },
              ]),
              'gen_ai.input.messages': JSON.stringify(messages.slice(-6)),
              'gen_ai.output.messages': JSON.stringify([
                {
                  role: 'assistant',
                  parts: [
                    { type: 'tool_call', id: callId, name: 'web_search', arguments: { q: 'x' } },
                  ],
                },
              ]),
            }
          : {}),
      }),
    });
    messages.push({
      role: 'assistant',
      parts: [{ type: 'tool_call', id: callId, name: 'web_search', arguments: { q: 'x' } }],
    });
    messages.push({
      role: 'tool',
      parts: [{ type: 'tool_call_response', id: callId, response: filler(600) }],
    });
    spans.push({
      traceId,
      spanId: randomBytes(8),
      parentSpanId: root,
      name: 'execute_tool web_search',
      kind: 1,
      startTimeUnixNano: (start + 1_600_000_000n).toString(),
      endTimeUnixNano: (start + 1_900_000_000n).toString(),
      attributes: attrs({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'web_search',
        'gen_ai.tool.call.id': callId,
        'gen_ai.conversation.id': conversation,
      }),
    });
  }
  spans.push({
    traceId,
    spanId: randomBytes(8),
    parentSpanId: root,
    name: 'GET /search',
    kind: 3,
    startTimeUnixNano: baseNs.toString(),
    endTimeUnixNano: (baseNs + 1_000_000n).toString(),
    attributes: attrs({ 'http.request.method': 'GET', 'url.full': 'https://search.example/api' }),
  });
  return spans;
}

export function encodeBatch(spans: BenchSpan[]): Buffer {
  const message = ExportTraceServiceRequest.fromObject({
    resourceSpans: [
      {
        resource: { attributes: attrs({ 'service.name': 'bench-agent' }) },
        scopeSpans: [{ scope: { name: 'bench', version: '1.0.0' }, spans }],
      },
    ],
  });
  return Buffer.from(ExportTraceServiceRequest.encode(message).finish());
}
