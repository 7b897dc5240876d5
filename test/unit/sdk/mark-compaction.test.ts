/**
 * @rotscope/sdk `markCompaction` and `RotscopeSpanProcessor` on the real OpenTelemetry Node SDK
 * (its AsyncLocalStorage context manager, an in-memory exporter): the compaction span, the flag
 * on the next LLM span of the same async context (once), nested async work, parallel flows,
 * child tasks, content capture, bad arguments.
 */
import { ROOT_CONTEXT, trace, type Attributes, type Span } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  RotscopeSpanProcessor,
  configure,
  markCompaction,
} from '../../../packages/sdk/src/index.ts';

const exporter = new InMemorySpanExporter();
let provider: NodeTracerProvider;

beforeAll(() => {
  provider = new NodeTracerProvider({
    spanProcessors: [new RotscopeSpanProcessor(), new SimpleSpanProcessor(exporter)],
  });
  provider.register();
});
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
});
afterEach(() => {
  exporter.reset();
  configure({ captureContent: false });
});

const tracer = () => trace.getTracer('test-app');

/** One LLM call as a semconv instrumentation makes it: a `chat` span, ended. */
function llmCall(name: string, attrs: Attributes = {}): void {
  tracer()
    .startSpan(name, { attributes: { 'gen_ai.operation.name': 'chat', ...attrs } })
    .end();
}

/** The `gen_ai.conversation.compacted` value of each finished LLM span, by span name. */
function flags(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of exporter.getFinishedSpans()) {
    if (s.attributes['gen_ai.operation.name'] === 'chat') {
      out[s.name] = s.attributes['gen_ai.conversation.compacted'];
    }
  }
  return out;
}

function compactionSpans(): ReadableSpan[] {
  return exporter.getFinishedSpans().filter((s) => s.name === 'compaction');
}

// Every test body starts after an await, as the flows of an application do: a mark made in the
// synchronous start of an async function would share its caller's context (see the README).
const tick = () => sleep(1);

describe('markCompaction', () => {
  it('flags the next LLM span of the same async context, once; other spans do not take it', async () => {
    await tick();
    llmCall('before');
    markCompaction();
    tracer()
      .startSpan('execute_tool read_file', {
        attributes: { 'gen_ai.operation.name': 'execute_tool' },
      })
      .end();
    llmCall('next');
    llmCall('after');
    expect(flags()).toEqual({ before: undefined, next: true, after: undefined });
  });

  it('records a compaction span under the current span with the DESIGN §5 attributes; summary size without content', async () => {
    await tick();
    await tracer().startActiveSpan(
      'invoke_agent coder',
      { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.conversation.id': 'c-1' } },
      async (agent: Span) => {
        markCompaction({
          kind: 'clear_tool_results',
          trigger: 'manual',
          tokensBefore: 150_000,
          tokensAfter: 20_000,
          messagesKept: 4,
          summary: 'the user wants a parser; tests pass',
        });
        agent.end();
      },
    );
    const [c] = compactionSpans();
    const agent = exporter.getFinishedSpans().find((s) => s.name === 'invoke_agent coder')!;
    expect(c!.parentSpanContext?.spanId).toBe(agent.spanContext().spanId);
    expect(c!.instrumentationScope.name).toBe('@rotscope/sdk');
    expect(c!.attributes).toEqual({
      'gen_ai.operation.name': 'compaction',
      'gen_ai.conversation.id': 'c-1',
      'rotscope.compaction.kind': 'clear_tool_results',
      'rotscope.compaction.trigger': 'manual',
      'rotscope.compaction.tokens_before': 150_000,
      'rotscope.compaction.tokens_after': 20_000,
      'rotscope.compaction.messages_kept': 4,
      'rotscope.compaction.summary_size': 35,
    });
  });

  it('every argument is optional: kind defaults to summarize', async () => {
    await tick();
    markCompaction();
    expect(compactionSpans().map((s) => s.attributes)).toEqual([
      { 'gen_ai.operation.name': 'compaction', 'rotscope.compaction.kind': 'summarize' },
    ]);
  });

  it('the summary text goes on the span only with content capture on', async () => {
    await tick();
    configure({ captureContent: true });
    markCompaction({ summary: 'résumé', conversationId: 'c-2' });
    expect(compactionSpans()[0]!.attributes).toMatchObject({
      'gen_ai.conversation.id': 'c-2',
      'rotscope.compaction.summary': 'résumé',
      'rotscope.compaction.summary_size': 6,
    });
  });

  it('an unknown kind or trigger, or a bad count, throws a clear TypeError and records nothing', async () => {
    await tick();
    const bad = (arg: unknown) => () => markCompaction(arg as Parameters<typeof markCompaction>[0]);
    expect(bad({ kind: 'squash' })).toThrow(
      new TypeError(
        '@rotscope/sdk markCompaction: unknown kind "squash"; expected one of summarize, clear_tool_results, truncate, other',
      ),
    );
    expect(bad({ trigger: 'cron' })).toThrow(
      '@rotscope/sdk markCompaction: unknown trigger "cron"; expected one of auto, manual',
    );
    expect(bad({ tokensBefore: -1 })).toThrow('tokensBefore must be a non-negative integer');
    expect(bad({ messagesKept: 1.5 })).toThrow('messagesKept must be a non-negative integer');
    expect(bad({ summary: 42 })).toThrow('summary must be a string');
    expect(bad(null)).toThrow('the argument must be an object');
    llmCall('next');
    expect(compactionSpans()).toEqual([]);
    expect(flags()).toEqual({ next: undefined });
  });

  it('nested async work after the mark (awaits, timers, nested functions) still takes it, once', async () => {
    await tick();
    markCompaction();
    const deeper = async () => {
      await sleep(2);
      llmCall('nested');
    };
    await new Promise<void>((resolve) => setTimeout(() => void deeper().then(resolve), 1));
    llmCall('later');
    expect(flags()).toEqual({ nested: true, later: undefined });
  });

  it('parallel flows: a mark in one flow never flags the other', async () => {
    await tick();
    const flow = async (name: string, mark: boolean) => {
      await sleep(1);
      if (mark) markCompaction({ conversationId: name });
      await sleep(5);
      llmCall(`${name}-1`);
      await sleep(1);
      llmCall(`${name}-2`);
    };
    await Promise.all([flow('a', true), flow('b', false), flow('c', true), flow('d', false)]);
    expect(flags()).toEqual({
      'a-1': true,
      'a-2': undefined,
      'b-1': undefined,
      'b-2': undefined,
      'c-1': true,
      'c-2': undefined,
      'd-1': undefined,
      'd-2': undefined,
    });
  });

  it('a child task: its mark flags its own next call; its parent does not see it', async () => {
    await tick();
    const child = async (callAfterMark: boolean) => {
      await sleep(1);
      markCompaction();
      if (callAfterMark) llmCall('child');
    };
    await child(false);
    llmCall('parent-after-child');
    await child(true);
    llmCall('parent-after-second-child');
    expect(flags()).toEqual({
      'parent-after-child': undefined,
      child: true,
      'parent-after-second-child': undefined,
    });
  });

  it("the parent's mark is seen by a child task started after it", async () => {
    await tick();
    markCompaction();
    await (async () => {
      await sleep(1);
      llmCall('child');
    })();
    llmCall('parent');
    expect(flags()).toEqual({ child: true, parent: undefined });
  });

  it('recognizes the LLM spans of the producers rotscope reads, at their start', async () => {
    await tick();
    const starts: Array<[string, Attributes]> = [
      ['ChatOpenAI', { 'openinference.span.kind': 'LLM' }],
      ['openai.chat', { 'llm.request.type': 'chat' }],
      ['ai.generateText.doGenerate', {}],
      ['claude_code.llm_request', {}],
    ];
    for (const [name, attrs] of starts) {
      markCompaction();
      tracer().startSpan(name, { attributes: attrs }).end();
    }
    // an aggregate span is not a call: the mark waits for the call below it
    markCompaction();
    tracer()
      .startSpan('ai.generateText', { attributes: { 'ai.operationId': 'ai.generateText' } })
      .end();
    expect(
      exporter
        .getFinishedSpans()
        .filter((s) => s.name !== 'compaction')
        .map((s) => [s.name, s.attributes['gen_ai.conversation.compacted']]),
    ).toEqual([
      ['ChatOpenAI', true],
      ['openai.chat', true],
      ['ai.generateText.doGenerate', true],
      ['claude_code.llm_request', true],
      ['ai.generateText', undefined],
    ]);
  });

  it('the processor never throws, whatever span it is handed', async () => {
    await tick();
    markCompaction();
    const processor = new RotscopeSpanProcessor();
    const odd = [
      { name: 'chat', attributes: undefined },
      {
        name: 'chat',
        attributes: { 'gen_ai.operation.name': 'chat' },
        setAttribute: () => {
          throw new Error('ended');
        },
      },
    ];
    for (const span of odd) {
      expect(() =>
        processor.onStart(span as unknown as Parameters<typeof processor.onStart>[0], ROOT_CONTEXT),
      ).not.toThrow();
    }
  });
});
