/**
 * The conversations the run view's tests look at, sent by the real OpenTelemetry SDK over the
 * real OTLP/HTTP exporter as an application instrumented with the GenAI semantic conventions
 * sends them (gpt-4o: a 128k window):
 * - `LOST_WITH_CONTENT`: message content captured; call 3 keeps only the latest question, so
 *   the earlier messages (a `read_file` result among them) are lost with no compaction marker
 *   (history_lost, lost, warning). A sub-agent's call runs beside the main thread.
 * - `LOST_WITHOUT_CONTENT`: the same drop with content capture off: no message is sent, only
 *   the sizes `@rotscope/sdk` reports (`rotscope.input.sizes`).
 * - `COMPACTED`: a drop explained by a compaction event carrying its summary (compacted, info).
 */
import { context, SpanKind, trace, type Span, type Tracer } from '@opentelemetry/api';
import { tracerProvider } from './otel.ts';

export const LOST_WITH_CONTENT = 'rv-lost-content';
export const LOST_WITHOUT_CONTENT = 'rv-lost-no-content';
export const COMPACTED = 'rv-compacted';

/** Texts only the captured conversation sends: none may show on the capture-off page. */
export const SECRET_FILE_TEXT = 'ZEBRA-LEDGER: the quarterly numbers file, line one of many.';
export const EARLY_QUESTION = 'Please summarise the ledger file PELICAN-QUESTION for me.';
export const EARLY_ANSWER = 'Reading it now: OSPREY-ANSWER.';
export const LATEST_QUESTION = 'And the total for March?';
export const SYSTEM_PROMPT = 'You are the ledger assistant. Answer from the files you read.';
export const SUMMARY_TEXT = 'The user asked about the ledger; KESTREL-SUMMARY of what was read.';

/** The usage of each call of the lost conversations: 40k, 52k, then 15k (−71 %). */
export const LOST_USAGE = [40_000, 52_000, 15_000] as const;
/** The compacted conversation: 60k, then 20k after the compaction. */
export const COMPACTED_USAGE = [60_000, 20_000] as const;

interface CallSpec {
  input: number;
  attributes?: Record<string, string>;
  agentId?: string;
}

function history(withFile: boolean) {
  const messages: unknown[] = [
    { role: 'user', parts: [{ type: 'text', content: EARLY_QUESTION }] },
  ];
  messages.push({
    role: 'assistant',
    parts: [
      { type: 'text', content: EARLY_ANSWER },
      { type: 'tool_call', id: 'call_1', name: 'read_file', arguments: { path: 'ledger.csv' } },
    ],
  });
  messages.push({
    role: 'tool',
    parts: [
      {
        type: 'tool_call_response',
        id: 'call_1',
        response: `${SECRET_FILE_TEXT} ${'1,2,3;'.repeat(400)}`,
      },
    ],
  });
  if (withFile)
    messages.push({ role: 'user', parts: [{ type: 'text', content: 'Now the February tab.' }] });
  return messages;
}

const latest = [{ role: 'user', parts: [{ type: 'text', content: LATEST_QUESTION }] }];

function chat(tracer: Tracer, parent: Span, id: string, call: CallSpec, at: number): void {
  const ctx = trace.setSpan(context.active(), parent);
  const span = tracer.startSpan(
    'chat gpt-4o',
    {
      kind: SpanKind.CLIENT,
      startTime: at,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.response.model': 'gpt-4o-2024-08-06',
        'gen_ai.conversation.id': id,
        'gen_ai.usage.input_tokens': call.input,
        'gen_ai.usage.output_tokens': 250,
        'gen_ai.response.finish_reasons': ['stop'],
        ...call.attributes,
      },
    },
    ctx,
  );
  span.end(at + 400);
}

function agentSpan(tracer: Tracer, id: string, agentId: string, at: number, parent?: Span): Span {
  return tracer.startSpan(
    `invoke_agent ${agentId}`,
    {
      startTime: at,
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.conversation.id': id,
        'gen_ai.agent.id': agentId,
        'gen_ai.agent.name': agentId,
      },
    },
    parent ? trace.setSpan(context.active(), parent) : undefined,
  );
}

const contentAttrs = (messages: unknown[]) => ({
  'gen_ai.input.messages': JSON.stringify(messages),
  'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: SYSTEM_PROMPT }]),
});

const sizesAttrs = (messages: number, file: number) => ({
  'rotscope.input.sizes': JSON.stringify({
    unit: 'chars',
    system: SYSTEM_PROMPT.length,
    messages,
    tools: file > 0 ? { read_file: file } : {},
  }),
});

/** Sends the three conversations through the OTel SDK to `url`; resolves once exported. */
export async function sendRunViewConversations(url: string): Promise<void> {
  const provider = tracerProvider({ url, protocol: 'protobuf', serviceName: 'ledger-agent' });
  const tracer = provider.getTracer('ledger-agent');
  const start = Date.now() - 120_000;

  // content captured: history, more history, then only the latest question
  const root = agentSpan(tracer, LOST_WITH_CONTENT, 'ledger', start);
  chat(
    tracer,
    root,
    LOST_WITH_CONTENT,
    { input: LOST_USAGE[0], attributes: contentAttrs(history(false)) },
    start + 1_000,
  );
  chat(
    tracer,
    root,
    LOST_WITH_CONTENT,
    { input: LOST_USAGE[1], attributes: contentAttrs(history(true)) },
    start + 2_000,
  );
  const sub = agentSpan(tracer, LOST_WITH_CONTENT, 'ledger-researcher', start + 2_500, root);
  chat(
    tracer,
    sub,
    LOST_WITH_CONTENT,
    { input: 6_000, attributes: contentAttrs(latest) },
    start + 2_600,
  );
  sub.end(start + 2_900);
  chat(
    tracer,
    root,
    LOST_WITH_CONTENT,
    { input: LOST_USAGE[2], attributes: contentAttrs(latest) },
    start + 3_000,
  );
  root.end(start + 4_000);

  // capture off: sizes only
  const bare = agentSpan(tracer, LOST_WITHOUT_CONTENT, 'ledger', start);
  chat(
    tracer,
    bare,
    LOST_WITHOUT_CONTENT,
    { input: LOST_USAGE[0], attributes: sizesAttrs(3_000, 2_500) },
    start + 1_000,
  );
  chat(
    tracer,
    bare,
    LOST_WITHOUT_CONTENT,
    { input: LOST_USAGE[1], attributes: sizesAttrs(3_900, 2_500) },
    start + 2_000,
  );
  chat(
    tracer,
    bare,
    LOST_WITHOUT_CONTENT,
    { input: LOST_USAGE[2], attributes: sizesAttrs(1_100, 0) },
    start + 3_000,
  );
  bare.end(start + 4_000);

  // compacted: a compaction event with its summary between the two calls
  const compacting = agentSpan(tracer, COMPACTED, 'ledger', start);
  chat(tracer, compacting, COMPACTED, { input: COMPACTED_USAGE[0] }, start + 1_000);
  compacting.addEvent(
    'rotscope.compaction',
    {
      'rotscope.compaction.trigger': 'auto',
      'rotscope.compaction.tokens_before': COMPACTED_USAGE[0],
      'rotscope.compaction.tokens_after': 4_000,
      'rotscope.compaction.summary': SUMMARY_TEXT,
    },
    start + 1_500,
  );
  chat(tracer, compacting, COMPACTED, { input: COMPACTED_USAGE[1] }, start + 2_000);
  compacting.end(start + 3_000);

  await provider.shutdown();
}
