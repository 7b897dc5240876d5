/**
 * End to end, automatic reports: the real `@anthropic-ai/sdk` (1.14) and `openai` (6.49) call
 * loopback fake providers (test/helpers/fake-providers.ts) that answer with the providers' own
 * compaction and clearing shapes; spans go through the real OpenTelemetry Node SDK and the
 * OTLP/HTTP protobuf exporter to a real `rotscope serve` child. Every conversation's context
 * goes 100k → 140k → 30k → 32k tokens. Where the client was registered with
 * `instrumentAnthropic` / `instrumentOpenAI`, the drop is `history_lost` info, kind
 * `compacted`, with the provider's marker (a clear is kept apart: kind `clear_tool_results`);
 * the same conversation through an unregistered client is the `lost` warning.
 *
 * Producers: Anthropic's own spans (`anthropic.messages.create`), an application's own
 * semconv GenAI spans, no instrumentation at all (the SDK's span), and
 * `@opentelemetry/instrumentation-openai` 0.21 (OTel GenAI) on the Responses API, content off.
 * That instrumentation cannot trace a request whose input holds a compaction item (it throws
 * while starting its span and calls the API untraced): after `responses.compact`, without the
 * SDK rotscope never sees the following calls (no finding at all, worse than `lost`); with it,
 * the SDK's own span traces them.
 */
import Anthropic from '@anthropic-ai/sdk';
import { trace, type Span } from '@opentelemetry/api';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { OpenAIInstrumentation } from '@opentelemetry/instrumentation-openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type OpenAINs from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RotscopeSpanProcessor,
  instrumentAnthropic,
  instrumentOpenAI,
} from '../../../packages/sdk/src/index.ts';
import { startChildServer, type ChildServer } from '../../helpers/child-server.ts';
import { startTelemetry } from '../../helpers/producers/otel.ts';
import { createTestDatabase } from '../../helpers/store.ts';
import {
  anthropicClearReply,
  anthropicCompactionReply,
  anthropicReply,
  openaiCompactReply,
  openaiReply,
  startFakeProvider,
  type FakeProvider,
} from '../../helpers/fake-providers.ts';

const require = createRequire(import.meta.url);
const MODEL = 'claude-sonnet-4-6';
const SUMMARY = 'The user asked three questions about the build; all were answered.';

interface Finding {
  conversationId: string;
  detector: string;
  severity: string;
  kind: string | null;
  details: { marker: Record<string, unknown> | null };
}

let server: ChildServer;
let dataDir: string;
const fakes: FakeProvider[] = [];
/** Conversation ids by case name (trace ids where the conversation is its trace). */
const conv: Record<string, string> = {};

type AnthropicTracing = 'sdk' | 'app' | 'none';

/** An Anthropic beta Messages conversation of 4 calls; the 3rd reply is `third`. */
async function anthropicConversation(
  name: string,
  tracing: AnthropicTracing,
  instrument: boolean,
  third: ReturnType<typeof anthropicReply>,
  edit: 'clear_tool_uses_20250919' | 'compact_20260112',
): Promise<void> {
  const fake = await startFakeProvider();
  fakes.push(fake);
  fake.enqueue(anthropicReply(100_000), anthropicReply(140_000), third, anthropicReply(32_000));
  const id = `conv_${name}`;
  conv[name] = id;
  const client = new Anthropic({
    apiKey: 'sk-ant-fake',
    baseURL: fake.url,
    maxRetries: 0,
    ...(tracing === 'sdk' ? {} : { openTelemetry: false }),
  });
  if (instrument) instrumentAnthropic(client);
  const tracer = trace.getTracer('sdk-provider-app');
  const messages: Anthropic.Beta.Messages.BetaMessageParam[] = [];
  const send = () =>
    client.beta.messages.create(
      {
        model: MODEL,
        max_tokens: 1024,
        messages: [...messages],
        context_management: { edits: [{ type: edit }] },
      },
      tracing === 'sdk' ? { openTelemetry: { conversationId: id } } : undefined,
    );
  /** The application's own semconv GenAI span around the call (a hand-instrumented app). */
  const inAppSpan = () =>
    tracer.startActiveSpan(
      `chat ${MODEL}`,
      {
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'anthropic',
          'gen_ai.request.model': MODEL,
          'gen_ai.conversation.id': id,
        },
      },
      async (span: Span) => {
        try {
          const reply = await send();
          const u = reply.usage;
          span.setAttribute(
            'gen_ai.usage.input_tokens',
            u.input_tokens +
              (u.cache_read_input_tokens ?? 0) +
              (u.cache_creation_input_tokens ?? 0),
          );
          span.setAttribute('gen_ai.usage.output_tokens', u.output_tokens);
          span.setAttribute('gen_ai.response.finish_reasons', [reply.stop_reason ?? '']);
          return reply;
        } finally {
          span.end();
        }
      },
    );
  const turns = async () => {
    for (const text of ['one', 'two', 'three', 'four']) {
      messages.push({ role: 'user', content: text });
      const reply = tracing === 'app' ? await inAppSpan() : await send();
      // the compaction block goes back with the history, as the API asks
      messages.push({ role: 'assistant', content: reply.content });
    }
  };
  if (tracing !== 'none') return turns();
  // No instrumentation: an agent span carries the conversation id the SDK's spans inherit.
  await tracer.startActiveSpan(
    'invoke_agent',
    { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.conversation.id': id } },
    async (span: Span) => {
      try {
        await turns();
      } finally {
        span.end();
      }
    },
  );
}

/**
 * An OpenAI Responses conversation of 4 calls through the OTel GenAI instrumentation.
 * `auto`: server-side compaction, the 3rd response holds a compaction item (conversation id
 * from the `conversation` parameter). `compact`: the application calls `responses.compact`
 * after the 2nd call and sends its output as the next input (all in one application span, so
 * the conversation is the trace).
 */
async function openaiConversation(
  OpenAI: typeof OpenAINs,
  name: string,
  mode: 'auto' | 'compact',
  instrument: boolean,
): Promise<void> {
  const fake = await startFakeProvider();
  fakes.push(fake);
  const client = new OpenAI({ apiKey: 'sk-fake', baseURL: `${fake.url}/v1`, maxRetries: 0 });
  if (instrument) instrumentOpenAI(client);
  if (mode === 'auto') {
    const id = `conv_${name}`;
    conv[name] = id;
    fake.enqueue(
      openaiReply(100_000, { conversation: id }),
      openaiReply(140_000, { conversation: id }),
      openaiReply(30_000, { conversation: id, compacted: true }),
      openaiReply(32_000, { conversation: id }),
    );
    for (const text of ['one', 'two', 'three', 'four']) {
      await client.responses.create({
        model: 'gpt-5.4',
        input: text,
        conversation: id,
        context_management: [{ type: 'compaction', compact_threshold: 135_000 }],
      });
    }
    return;
  }
  fake.enqueue(
    openaiReply(100_000),
    openaiReply(140_000),
    openaiCompactReply(140_000, ['one', 'two']),
    openaiReply(30_000),
    openaiReply(32_000),
  );
  await trace.getTracer('sdk-provider-app').startActiveSpan('agent turn loop', async (root) => {
    conv[name] = root.spanContext().traceId;
    try {
      let input: OpenAINs.Responses.ResponseInput = [];
      const call = async (text: string) => {
        input = [...input, { role: 'user', content: text }];
        const r = await client.responses.create({ model: 'gpt-5.4', input });
        input = [...input, ...(r.output as OpenAINs.Responses.ResponseInputItem[])];
      };
      await call('one');
      await call('two');
      const compacted = await client.responses.compact({ model: 'gpt-5.4', input });
      input = compacted.output as OpenAINs.Responses.ResponseInputItem[];
      await call('three');
      await call('four');
    } finally {
      root.end();
    }
  });
}

async function callsOf(name: string): Promise<number> {
  const res = await fetch(`${server.url}/api/conversations/${conv[name]}`);
  if (res.status === 404) return 0;
  expect(res.status).toBe(200);
  return ((await res.json()) as { calls: unknown[] }).calls.length;
}

async function findings(): Promise<Finding[]> {
  const res = await fetch(`${server.url}/api/findings?limit=100&detector=history_lost`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: Finding[] }).items;
}

/** Waits until every case has its history_lost finding; returns them by case name. */
async function historyLost(names: string[]): Promise<Record<string, Finding[]>> {
  for (;;) {
    const all = await findings();
    const got: Record<string, Finding[]> = {};
    for (const n of names) got[n] = all.filter((f) => f.conversationId === conv[n]);
    if (names.every((n) => got[n]!.length > 0)) return got;
    await sleep(100);
  }
}

const INSTRUMENTED = ['anth_clear', 'anth_compaction', 'anth_own_span', 'oai_auto', 'oai_compact'];
const PLAIN = ['anth_clear_plain', 'anth_compaction_plain', 'oai_auto_plain'];

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-sdk-providers-'));
  const url = await createTestDatabase();
  server = await startChildServer({
    ...(url ? { DATABASE_URL: url } : { ROTSCOPE_DATA_DIR: dataDir }),
    ROTSCOPE_EVALUATOR_QUIET_MS: '100',
    ROTSCOPE_EVALUATOR_POLL_MS: '100',
  });
  const telemetry = startTelemetry(
    { rotscopeUrl: server.url, llmUrl: '' },
    'sdk-provider-app',
    'proto',
    [new RotscopeSpanProcessor()],
  );
  const instrumentation = new OpenAIInstrumentation({ captureMessageContent: false });
  const unregister = registerInstrumentations({ instrumentations: [instrumentation] });
  try {
    const { OpenAI } = require('openai') as typeof import('openai');
    const clear = () => anthropicClearReply(30_000, 110_000);
    const compaction = () => anthropicCompactionReply(30_000, SUMMARY);
    await Promise.all([
      anthropicConversation('anth_clear', 'sdk', true, clear(), 'clear_tool_uses_20250919'),
      anthropicConversation('anth_clear_plain', 'sdk', false, clear(), 'clear_tool_uses_20250919'),
      anthropicConversation('anth_compaction', 'app', true, compaction(), 'compact_20260112'),
      anthropicConversation(
        'anth_compaction_plain',
        'app',
        false,
        compaction(),
        'compact_20260112',
      ),
      anthropicConversation('anth_own_span', 'none', true, compaction(), 'compact_20260112'),
      openaiConversation(OpenAI, 'oai_auto', 'auto', true),
      openaiConversation(OpenAI, 'oai_auto_plain', 'auto', false),
      openaiConversation(OpenAI, 'oai_compact', 'compact', true),
      openaiConversation(OpenAI, 'oai_compact_plain', 'compact', false),
    ]);
  } finally {
    unregister();
    instrumentation.disable();
    await telemetry.shutdown();
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(fakes.map((f) => f.close()));
  server?.process.kill('SIGTERM');
  if (server) await server.exited;
  rmSync(dataDir, { recursive: true, force: true });
});

describe('@rotscope/sdk automatic reports, end to end', () => {
  it('every scripted reply reached its fake provider', () => {
    expect(fakes.map((f) => f.pending())).toEqual(Array(fakes.length).fill(0));
    expect(fakes.map((f) => f.requests.length).sort()).toEqual([4, 4, 4, 4, 4, 4, 4, 5, 5]);
  });

  it('with the SDK each drop is history_lost info, kind compacted; without it, the lost warning', async () => {
    const got = await historyLost([...INSTRUMENTED, ...PLAIN]);
    const verdicts = Object.fromEntries(
      Object.entries(got).map(([n, fs]) => [n, fs.map((f) => [f.severity, f.kind])]),
    );
    expect(verdicts).toEqual({
      ...Object.fromEntries(INSTRUMENTED.map((n) => [n, [['info', 'compacted']]])),
      ...Object.fromEntries(PLAIN.map((n) => [n, [['warning', 'lost']]])),
    });
  });

  it('the marker says what the provider did: a clear is kept apart from a summary', async () => {
    const got = await historyLost(INSTRUMENTED);
    const marker = (n: string) => {
      const m = got[n]![0]!.details.marker!;
      return {
        evidence: m['evidence'],
        kind: m['kind'],
        tokensBefore: m['tokensBefore'],
        tokensAfter: m['tokensAfter'],
      };
    };
    expect(marker('anth_clear')).toEqual({
      evidence: 'span_event',
      kind: 'clear_tool_results',
      tokensBefore: 140_000,
      tokensAfter: 30_000,
    });
    for (const n of ['anth_compaction', 'anth_own_span']) {
      expect(marker(n)).toEqual({
        evidence: 'span_event',
        kind: 'summarize',
        tokensBefore: null,
        tokensAfter: 30_000,
      });
    }
    expect(marker('oai_auto')).toEqual({
      evidence: 'span_event',
      kind: 'summarize',
      tokensBefore: null,
      tokensAfter: null,
    });
    // reported on the call after `responses.compact`, with what the compact result said
    expect(marker('oai_compact')).toEqual({
      evidence: 'span_event',
      kind: 'summarize',
      tokensBefore: 140_000,
      tokensAfter: null,
    });
  });

  it('responses.compact through the OTel GenAI instrumentation: without the SDK the calls after it are lost to rotscope; with it, the SDK traces them', async () => {
    // @opentelemetry/instrumentation-openai 0.21 throws on a `compaction` input item while
    // starting its span and calls the API untraced: the two calls after the compaction never
    // reach rotscope, so there is no finding at all. Instrumented, no LLM span is active for
    // those calls and the SDK makes its own (compacted, see above).
    await historyLost(['oai_compact']);
    expect(await callsOf('oai_compact')).toBe(4);
    expect(await callsOf('oai_compact_plain')).toBe(2);
    expect(
      (await findings()).filter((f) => f.conversationId === conv['oai_compact_plain']),
    ).toEqual([]);
  });
});
