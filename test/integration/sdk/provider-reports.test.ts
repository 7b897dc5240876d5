/**
 * @rotscope/sdk automatic reports on the real OpenTelemetry Node SDK (in-memory exporter) with
 * the real `@anthropic-ai/sdk` and `openai` clients against the loopback fake providers: what
 * goes on which span (the instrumentation's span is added to, never replaced; the SDK's own
 * span only when none is active), parallel flows without cross-talk, a failed call passed
 * through untouched, content capture, idempotent registration.
 */
import Anthropic from '@anthropic-ai/sdk';
import { trace, type Span } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-node';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  RotscopeSpanProcessor,
  configure,
  instrumentAnthropic,
  instrumentOpenAI,
  rotscopeFetch,
} from '../../../packages/sdk/src/index.ts';
import {
  anthropicClearReply,
  anthropicCompactionReply,
  anthropicReply,
  openaiCompactReply,
  openaiReply,
  startFakeProvider,
  type FakeProvider,
} from '../../helpers/fake-providers.ts';

const exporter = new InMemorySpanExporter();
let provider: NodeTracerProvider;
const fakes: FakeProvider[] = [];

beforeAll(() => {
  provider = new NodeTracerProvider({
    spanProcessors: [new RotscopeSpanProcessor(), new SimpleSpanProcessor(exporter)],
  });
  provider.register();
});
afterAll(async () => {
  await Promise.all(fakes.map((f) => f.close()));
  await provider.shutdown();
  trace.disable();
});
afterEach(() => {
  exporter.reset();
  configure({ captureContent: false });
});

async function fake(): Promise<FakeProvider> {
  const f = await startFakeProvider();
  fakes.push(f);
  return f;
}

const llmSpans = (): ReadableSpan[] =>
  exporter.getFinishedSpans().filter((s) => s.attributes['gen_ai.operation.name'] === 'chat');

/** Per LLM span: its name, compacted flag and the kinds/edits of its compaction events. */
function reports(spans = llmSpans()) {
  return spans.map((s) => ({
    name: s.name,
    compacted: s.attributes['gen_ai.conversation.compacted'] ?? false,
    events: s.events
      .filter((e) => e.name === 'rotscope.compaction')
      .map((e) => ({
        kind: e.attributes?.['rotscope.compaction.kind'],
        source: e.attributes?.['rotscope.compaction.source'],
        atStart: e.time[0] === s.startTime[0] && e.time[1] === s.startTime[1],
      })),
  }));
}

const anthropic = (f: FakeProvider, openTelemetry = true) =>
  new Anthropic({
    apiKey: 'sk-ant-fake',
    baseURL: f.url,
    maxRetries: 0,
    ...(openTelemetry ? {} : { openTelemetry: false }),
  });

const ask = (client: Anthropic, messages: Anthropic.Beta.Messages.BetaMessageParam[]) =>
  client.beta.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 100, messages });

describe('automatic reports on the Anthropic SDK', () => {
  it("adds to the SDK's own span (one span per call): compaction at the call's start, flag; the replayed block is not reported again", async () => {
    const f = await fake();
    f.enqueue(anthropicCompactionReply(30_000, 'summary'), anthropicReply(31_000));
    const client = instrumentAnthropic(anthropic(f));
    const r1 = await ask(client, [{ role: 'user', content: 'one' }]);
    await ask(client, [
      { role: 'user', content: 'one' },
      { role: 'assistant', content: r1.content },
      { role: 'user', content: 'two' },
    ]);
    expect(reports()).toEqual([
      {
        name: 'anthropic.messages.create',
        compacted: true,
        events: [{ kind: 'summarize', source: 'anthropic.compaction', atStart: true }],
      },
      { name: 'anthropic.messages.create', compacted: false, events: [] },
    ]);
    const event = llmSpans()[0]!.events[0]!;
    // content capture off: the summary's size, not its text
    expect(event.attributes?.['rotscope.compaction.summary_size']).toBe('summary'.length);
    expect(event.attributes?.['rotscope.compaction.summary']).toBeUndefined();
    expect(event.attributes?.['rotscope.compaction.tokens_after']).toBe(30_000);
  });

  it('clears are their own kind and never set the compacted flag; thinking clears are other', async () => {
    const f = await fake();
    const reply = anthropicClearReply(30_000, 50_000, [
      { type: 'clear_thinking_20251015', cleared_input_tokens: 2_000, cleared_thinking_turns: 3 },
    ]);
    f.enqueue(reply);
    await ask(instrumentAnthropic(anthropic(f)), [{ role: 'user', content: 'one' }]);
    const [span] = llmSpans();
    expect(span!.attributes['gen_ai.conversation.compacted']).toBeUndefined();
    expect(span!.events.map((e) => e.attributes)).toEqual([
      {
        'rotscope.compaction.kind': 'clear_tool_results',
        'rotscope.compaction.source': 'anthropic.context_management',
        'rotscope.compaction.edit': 'clear_tool_uses_20250919',
        'rotscope.compaction.tokens_cleared': 50_000,
        'rotscope.compaction.items_cleared': 12,
        'rotscope.compaction.tokens_before': 80_000,
        'rotscope.compaction.tokens_after': 30_000,
      },
      {
        'rotscope.compaction.kind': 'other',
        'rotscope.compaction.source': 'anthropic.context_management',
        'rotscope.compaction.edit': 'clear_thinking_20251015',
        'rotscope.compaction.tokens_cleared': 2_000,
        'rotscope.compaction.items_cleared': 3,
        'rotscope.compaction.tokens_before': 32_000,
        'rotscope.compaction.tokens_after': 30_000,
      },
    ]);
  });

  it('with no instrumentation it makes one semconv span per call, with usage; with content capture on, the summary text', async () => {
    configure({ captureContent: true });
    const f = await fake();
    f.enqueue(anthropicCompactionReply(30_000, 'the summary'));
    await ask(instrumentAnthropic(anthropic(f, false)), [{ role: 'user', content: 'one' }]);
    const [span, ...rest] = llmSpans();
    expect(rest).toEqual([]);
    expect(span!.name).toBe('chat claude-sonnet-4-6');
    expect(span!.instrumentationScope.name).toBe('@rotscope/sdk');
    expect(span!.attributes).toMatchObject({
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.usage.input_tokens': 30_000,
      'gen_ai.usage.output_tokens': 400,
      'gen_ai.response.finish_reasons': ['end_turn'],
      'gen_ai.conversation.compacted': true,
    });
    expect(span!.events[0]!.attributes?.['rotscope.compaction.summary']).toBe('the summary');
  });

  it('parallel flows: each compaction is reported on its own call only', async () => {
    const [a, b] = [await fake(), await fake()];
    a.enqueue(
      anthropicReply(100_000),
      anthropicCompactionReply(30_000, 's'),
      anthropicReply(31_000),
    );
    b.enqueue(anthropicReply(100_000), anthropicReply(110_000), anthropicReply(120_000));
    const flow = async (f: FakeProvider, name: string) => {
      const client = instrumentAnthropic(anthropic(f, false));
      await trace.getTracer('app').startActiveSpan(name, async (root: Span) => {
        const messages: Anthropic.Beta.Messages.BetaMessageParam[] = [];
        for (const text of ['1', '2', '3']) {
          messages.push({ role: 'user', content: text });
          const r = await ask(client, [...messages]);
          messages.push({ role: 'assistant', content: r.content });
        }
        root.end();
      });
    };
    await Promise.all([flow(a, 'flow a'), flow(b, 'flow b')]);
    const byFlow = (name: string) => {
      const root = exporter.getFinishedSpans().find((s) => s.name === name)!;
      return reports(
        llmSpans()
          .filter((s) => s.spanContext().traceId === root.spanContext().traceId)
          .sort((x, y) => x.startTime[0] - y.startTime[0] || x.startTime[1] - y.startTime[1]),
      ).map((r) => [r.compacted, r.events.length]);
    };
    expect(byFlow('flow a')).toEqual([
      [false, 0],
      [true, 1],
      [false, 0],
    ]);
    expect(byFlow('flow b')).toEqual([
      [false, 0],
      [false, 0],
      [false, 0],
    ]);
  });

  it('a failed call passes through untouched; registering twice adds one middleware', async () => {
    const f = await fake();
    const client = instrumentAnthropic(instrumentAnthropic(anthropic(f)));
    expect((client as unknown as { middleware: unknown[] }).middleware).toHaveLength(1);
    // nothing scripted: the fake answers 500 and the SDK's error reaches the caller
    await expect(ask(client, [{ role: 'user', content: 'x' }])).rejects.toThrow(/500/);
    expect(reports()).toEqual([
      { name: 'anthropic.messages.create', compacted: false, events: [] },
    ]);
  });
});

describe('automatic reports on the OpenAI SDK', () => {
  it('a compaction output item is reported on its call and on the next call continuing the conversation', async () => {
    const f = await fake();
    f.enqueue(
      openaiReply(30_000, { compacted: true, conversation: 'conv_1' }),
      openaiReply(31_000, { conversation: 'conv_1' }),
      openaiReply(32_000, { conversation: 'conv_1' }),
    );
    const client = instrumentOpenAI(
      new OpenAI({ apiKey: 'sk-fake', baseURL: `${f.url}/v1`, maxRetries: 0 }),
    );
    for (const t of ['1', '2', '3']) {
      await client.responses.create({ model: 'gpt-5.4', input: t, conversation: 'conv_1' });
    }
    expect(reports().map((r) => [r.compacted, r.events.map((e) => e.source)])).toEqual([
      [true, ['openai.compaction_item']],
      [true, ['openai.compaction_item.continued']],
      [false, []],
    ]);
  });

  it('the /responses/compact result is reported on the first call that sends its compaction item back', async () => {
    const f = await fake();
    f.enqueue(
      openaiCompactReply(140_000, ['one', 'two']),
      openaiReply(30_000),
      openaiReply(31_000),
    );
    // the constructor option works as well as instrumentOpenAI
    const client = new OpenAI({
      apiKey: 'sk-fake',
      baseURL: `${f.url}/v1`,
      maxRetries: 0,
      fetch: rotscopeFetch(),
    });
    const compacted = await client.responses.compact({ model: 'gpt-5.4', input: 'one two' });
    expect(llmSpans()).toEqual([]); // the compact call itself is not an LLM call
    let input = compacted.output as OpenAI.Responses.ResponseInputItem[];
    for (const t of ['three', 'four']) {
      input = [...input, { role: 'user', content: t }];
      await client.responses.create({ model: 'gpt-5.4', input });
    }
    const [first, second] = llmSpans();
    expect(first!.attributes['gen_ai.conversation.compacted']).toBe(true);
    expect(first!.events.map((e) => e.attributes)).toEqual([
      {
        'rotscope.compaction.kind': 'summarize',
        'rotscope.compaction.source': 'openai.responses.compact',
        'rotscope.compaction.tokens_before': 140_000,
        'rotscope.compaction.messages_kept': 2,
      },
    ]);
    expect(second!.events).toEqual([]);
  });
});
