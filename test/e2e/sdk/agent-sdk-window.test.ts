/**
 * The Claude Agent SDK's window, end to end (issue 34 §1): an application iterates a scripted
 * `query()` stream (Agent SDK 0.3.336-shaped messages: `system` init, `assistant`, `user` tool
 * results, a `result` with `modelUsage[model].contextWindow` after each turn) through
 * `observeAgentMessages`, with the real OTel Node SDK and OTLP/HTTP exporter as its telemetry;
 * beside it, the Claude Code process the SDK spawns exports the session's calls with its own
 * providers (simulated: `claude_code.llm_request` spans and `api_request` logs as agents.md
 * measured them for CLI 2.1.336, service `claude-code`); both go to a real `rotscope serve`
 * child. The model is one no catalog knows (`claude-test-9`), its reported window 400,000: the
 * calls stored before the first `result` have no window, then every call of the session has
 * 400,000, source `agent`, and is judged on it. The messages pass through unchanged, and the
 * second turn's `result` (same session, model and window) sends no second report.
 */
import { ROOT_CONTEXT, SpanKind, context, trace } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import {
  BatchSpanProcessor,
  InMemorySpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AGENT_SDK_REPORTER,
  observeAgentMessages,
  reportAgentResult,
} from '../../../packages/sdk/src/index.ts';
import { startChildServer, type ChildServer } from '../../helpers/child-server.ts';
import { startTelemetry } from '../../helpers/producers/otel.ts';
import { createTestDatabase } from '../../helpers/store.ts';

const SESSION = '5b0c7e4a-91d2-4f3e-8a6b-2c9d0e1f7a35';
const MODEL = 'claude-test-9';
const WINDOW = 400_000;
const CLI_VERSION = '2.1.336';

interface Call {
  requestId: string;
  /** input + cache read + cache creation: the call's context, tokens */
  context: number;
  stopReason: 'tool_use' | 'end_turn';
}
/** Turn 1 ends at 75% of the reported window (a warning once judged), turn 2 at 93% (critical). */
const TURNS: Call[][] = [
  [
    { requestId: 'req_sdk_1', context: 120_000, stopReason: 'tool_use' },
    { requestId: 'req_sdk_2', context: 300_000, stopReason: 'end_turn' },
  ],
  [
    { requestId: 'req_sdk_3', context: 340_000, stopReason: 'tool_use' },
    { requestId: 'req_sdk_4', context: 372_000, stopReason: 'end_turn' },
  ],
];

interface ApiCall {
  spanId: string;
  responseModel: string | null;
  contextTokens: number | null;
  contextWindow: number | null;
  windowSource: string | null;
}
interface Summary {
  id: string;
  calls: number;
  fullestShare: number | null;
  windowUnknown: string[];
}

let server: ChildServer;
let dataDir: string;
/** What the application saw of the stream, and what it was given. */
const seen: unknown[] = [];
const scripted: unknown[] = [];
/** The conversation as the server had it just before the first `result` went through. */
let beforeResult: { calls: ApiCall[]; summary: Summary | undefined };
/** The application's own spans (beside the OTLP export); read before its provider shuts down. */
const appSpans = new InMemorySpanExporter();
let windowSpans: ReturnType<InMemorySpanExporter['getFinishedSpans']> = [];

/** The Claude Code process the SDK spawns: its own providers, its own exporters (simulated). */
function startCli(url: string) {
  const resource = resourceFromAttributes({
    'service.name': 'claude-code',
    'service.version': CLI_VERSION,
  });
  const tracerProvider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${url}/v1/traces` }))],
  });
  const loggerProvider = new LoggerProvider({
    resource,
    processors: [
      new BatchLogRecordProcessor({ exporter: new OTLPLogExporter({ url: `${url}/v1/logs` }) }),
    ],
  });
  const tracer = tracerProvider.getTracer('com.anthropic.claude_code.tracing', '1.0.0');
  const logger = loggerProvider.getLogger('com.anthropic.claude_code.events', CLI_VERSION);
  let clock = Date.now() - 5 * 60_000;
  let sequence = 0;
  const standard = { 'session.id': SESSION, 'terminal.type': 'xterm-256color' };
  return {
    /** One turn: a `claude_code.interaction` trace with the turn's `llm_request` spans. */
    turn(n: number, calls: Call[]) {
      const interaction = tracer.startSpan(
        'claude_code.interaction',
        {
          kind: SpanKind.INTERNAL,
          startTime: (clock += 1000),
          attributes: { ...standard, 'span.type': 'interaction', 'interaction.sequence': 1 },
        },
        ROOT_CONTEXT,
      );
      const parent = trace.setSpan(ROOT_CONTEXT, interaction);
      for (const call of calls) {
        const cacheRead = call.context - 2_008;
        const usage = {
          input_tokens: 8,
          cache_read_tokens: cacheRead,
          cache_creation_tokens: 2_000,
          output_tokens: 120,
        };
        const span = tracer.startSpan(
          'claude_code.llm_request',
          {
            kind: SpanKind.INTERNAL,
            startTime: (clock += 1000),
            attributes: {
              ...standard,
              'span.type': 'llm_request',
              'gen_ai.conversation.id': SESSION,
              model: MODEL,
              'gen_ai.system': 'anthropic',
              'gen_ai.request.model': MODEL,
              'llm_request.context': 'interaction',
              query_source_safe: 'sdk',
            },
          },
          parent,
        );
        span.setAttributes({
          ...usage,
          'gen_ai.response.model': MODEL,
          'gen_ai.usage.input_tokens': call.context,
          'gen_ai.usage.cache_read.input_tokens': cacheRead,
          'gen_ai.usage.cache_write.input_tokens': 2_000,
          'gen_ai.usage.output_tokens': 120,
          request_id: call.requestId,
          'gen_ai.response.id': call.requestId,
          stop_reason: call.stopReason,
          'gen_ai.response.finish_reasons': [call.stopReason],
        });
        span.end((clock += 2000));
        logger.emit({
          timestamp: clock,
          observedTimestamp: clock,
          context: ROOT_CONTEXT,
          severityNumber: SeverityNumber.INFO,
          eventName: 'claude_code.api_request',
          body: 'claude_code.api_request',
          attributes: {
            ...standard,
            'event.name': 'api_request',
            'event.timestamp': new Date(clock).toISOString(),
            'event.sequence': sequence++,
            'prompt.id': `prompt-${n}`,
            model: MODEL,
            ...usage,
            request_id: call.requestId,
            query_source: 'sdk',
          },
        });
      }
      interaction.end((clock += 100));
    },
    async flush() {
      await tracerProvider.forceFlush();
      await loggerProvider.forceFlush();
    },
    async shutdown() {
      await tracerProvider.shutdown();
      await loggerProvider.shutdown();
    },
  };
}

async function get<T>(route: string): Promise<T> {
  const res = await fetch(`${server.url}${route}`);
  expect(res.status, route).toBe(200);
  return (await res.json()) as T;
}
const callsOf = async () =>
  (await get<{ calls: ApiCall[] }>(`/api/conversations/${SESSION}`).catch(() => ({ calls: [] })))
    .calls;
const summaryOf = async () =>
  (await get<{ items: Summary[] }>('/api/conversations')).items.find((c) => c.id === SESSION);

/** Polls until `done` holds of what `read` returns (or 10 s pass); returns the last reading. */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  for (const deadline = Date.now() + 10_000; ; await sleep(100)) {
    const v = await read();
    if (done(v) || Date.now() > deadline) return v;
  }
}

/**
 * The scripted `query()` stream of two turns (the second a resumed query of the same session):
 * while it runs, the CLI exports each turn's calls; the turn's `result` comes after them.
 */
async function* agentMessages(cli: ReturnType<typeof startCli>): AsyncGenerator<unknown, void> {
  const emit = (m: Record<string, unknown>) => {
    scripted.push(m);
    return m;
  };
  for (const [i, calls] of TURNS.entries()) {
    const n = i + 1;
    yield emit({
      type: 'system',
      subtype: 'init',
      session_id: SESSION,
      uuid: `init-${n}`,
      model: MODEL,
      tools: ['Bash', 'Read'],
      permissionMode: 'default',
      apiKeySource: 'ANTHROPIC_API_KEY',
      cwd: '/work/app',
    });
    cli.turn(n, calls);
    yield emit({
      type: 'assistant',
      session_id: SESSION,
      uuid: `a-${n}-1`,
      parent_tool_use_id: null,
      message: {
        id: `msg_${n}_1`,
        role: 'assistant',
        model: MODEL,
        content: [
          { type: 'tool_use', id: `toolu_${n}`, name: 'Bash', input: { command: 'wc -l app.py' } },
        ],
        stop_reason: 'tool_use',
        usage: { input_tokens: 8, output_tokens: 120 },
      },
    });
    yield emit({
      type: 'user',
      session_id: SESSION,
      uuid: `u-${n}`,
      parent_tool_use_id: null,
      message: {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: `toolu_${n}`, content: '2 app.py' }],
      },
    });
    yield emit({
      type: 'assistant',
      session_id: SESSION,
      uuid: `a-${n}-2`,
      parent_tool_use_id: null,
      message: {
        id: `msg_${n}_2`,
        role: 'assistant',
        model: MODEL,
        content: [{ type: 'text', text: 'app.py has 2 lines.' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 8, output_tokens: 120 },
      },
    });
    if (n === 1) {
      // the session's calls reach the server before the result message does
      await cli.flush();
      const stored = await until(callsOf, (c) => c.length === calls.length);
      beforeResult = { calls: stored, summary: await summaryOf() };
    }
    yield emit({
      type: 'result',
      subtype: 'success',
      session_id: SESSION,
      uuid: `r-${n}`,
      is_error: false,
      num_turns: 2,
      result: 'app.py has 2 lines.',
      duration_ms: 4_200,
      duration_api_ms: 3_900,
      total_cost_usd: 0.42,
      usage: { input_tokens: 16, output_tokens: 240 },
      modelUsage: {
        [MODEL]: {
          inputTokens: 16,
          outputTokens: 240,
          cacheReadInputTokens: 400_000,
          cacheCreationInputTokens: 4_000,
          webSearchRequests: 0,
          costUSD: 0.42,
          contextWindow: WINDOW,
          maxOutputTokens: 32_000,
        },
        // a model without a window in its usage: nothing to report for it
        'claude-test-9-mini': { inputTokens: 3, outputTokens: 1, costUSD: 0.001 },
      },
      permission_denials: [],
    });
  }
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-sdk-agent-window-'));
  const url = await createTestDatabase();
  server = await startChildServer({
    ...(url ? { DATABASE_URL: url } : { ROTSCOPE_DATA_DIR: dataDir }),
    ROTSCOPE_EVALUATOR_QUIET_MS: '100',
    ROTSCOPE_EVALUATOR_POLL_MS: '100',
  });
  const cli = startCli(server.url);
  const telemetry = startTelemetry(
    { rotscopeUrl: server.url, llmUrl: '' },
    'agent-sdk-app',
    'proto',
    [new SimpleSpanProcessor(appSpans)],
  );
  try {
    // the application: iterate query()'s messages through observeAgentMessages
    for await (const message of observeAgentMessages(agentMessages(cli))) seen.push(message);
    await cli.flush();
    windowSpans = appSpans.getFinishedSpans().filter((s) => s.name === 'rotscope.window');
  } finally {
    await telemetry.shutdown();
    await cli.shutdown();
  }
}, 60_000);

afterAll(async () => {
  server?.process.kill('SIGTERM');
  if (server) await server.exited;
  rmSync(dataDir, { recursive: true, force: true });
});

describe('@rotscope/sdk: the Claude Agent SDK window', () => {
  it('passes every message through unchanged, in order', () => {
    expect(seen).toHaveLength(10);
    expect(seen.length).toBe(scripted.length);
    seen.forEach((m, i) => expect(m).toBe(scripted[i]));
    expect(JSON.stringify(seen)).toContain('"contextWindow":400000');
  });

  it('reports one rotscope.window span for the session and model, not again on the second result', () => {
    expect(windowSpans.map((s) => s.attributes)).toEqual([
      {
        'gen_ai.conversation.id': SESSION,
        'session.id': SESSION,
        'rotscope.window.model': MODEL,
        'rotscope.window.tokens': WINDOW,
        'rotscope.window.reporter': AGENT_SDK_REPORTER,
      },
    ]);
  });

  it('before the result, the calls of the unknown model have no window', () => {
    expect(
      beforeResult.calls.map((c) => [c.responseModel, c.contextWindow, c.windowSource]),
    ).toEqual([
      [MODEL, null, null],
      [MODEL, null, null],
    ]);
    expect(beforeResult.summary).toMatchObject({ fullestShare: null, windowUnknown: [MODEL] });
  });

  it("then every call of the session is judged on the SDK's window, source agent", async () => {
    const calls = await until(
      callsOf,
      (c) => c.length === 4 && c.every((call) => call.contextWindow === WINDOW),
    );
    expect(
      calls.map((c) => [c.responseModel, c.contextTokens, c.contextWindow, c.windowSource]),
    ).toEqual(TURNS.flat().map((t) => [MODEL, t.context, WINDOW, 'agent']));
    const summary = await until(summaryOf, (s) => s?.fullestShare != null);
    expect(summary).toMatchObject({ calls: 4, windowUnknown: [] });
    expect(summary!.fullestShare).toBeCloseTo(372_000 / WINDOW, 2);
    const findings = await until(
      async () =>
        (
          await get<{
            items: Array<{
              conversationId: string;
              detector: string;
              severity: string;
              summary: string;
            }>;
          }>('/api/findings?limit=100')
        ).items.filter((f) => f.conversationId === SESSION && f.detector === 'context_too_full'),
      (f) => f.some((x) => x.severity === 'critical'),
    );
    // one run (the session): the turn-1 call at 75% crossed first, judged late; the fullest is 93%
    expect(findings.map((f) => [f.severity, f.summary])).toEqual([
      [
        'critical',
        expect.stringContaining('Context 93% full (372,000 of 400,000 tokens) on claude-test-9.'),
      ],
    ]);
  });
});

describe('reportAgentResult', () => {
  it('ignores other messages and windows that are not positive integers; a new window is reported', () => {
    const exporter = new InMemorySpanExporter();
    const provider = new NodeTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    // before any tracer provider is registered nothing is sent, and nothing is marked sent
    const result = (window: unknown) => ({
      type: 'result',
      session_id: 'sess-unit',
      modelUsage: { 'claude-unit': { contextWindow: window } },
    });
    expect(reportAgentResult(result(200_000))).toBe(0);
    provider.register();
    try {
      expect(reportAgentResult({ type: 'assistant', session_id: 'sess-unit' })).toBe(0);
      expect(reportAgentResult(null)).toBe(0);
      expect(reportAgentResult({ type: 'result', modelUsage: {} })).toBe(0);
      for (const bad of [0, -1, 1.5, '200000', null])
        expect(reportAgentResult(result(bad))).toBe(0);
      expect(reportAgentResult(result(200_000))).toBe(1);
      expect(reportAgentResult(result(200_000))).toBe(0);
      expect(reportAgentResult(result(1_000_000))).toBe(1);
      expect(
        exporter.getFinishedSpans().map((s) => s.attributes['rotscope.window.tokens']),
      ).toEqual([200_000, 1_000_000]);
    } finally {
      void provider.shutdown();
      trace.disable();
      context.disable();
    }
  });

  it('observeAgentMessages keeps the iterable: return() reaches the source, a throwing tracer is harmless', async () => {
    let closed = false;
    async function* source() {
      try {
        yield { type: 'result', session_id: 'sess-x', modelUsage: { m: { contextWindow: 5 } } };
        yield { type: 'assistant' };
      } finally {
        closed = true;
      }
    }
    trace.setGlobalTracerProvider({
      getTracer: () => {
        throw new Error('broken tracer');
      },
    });
    try {
      const observed = observeAgentMessages(source());
      for await (const m of observed) {
        expect(m).toMatchObject({ type: 'result' });
        break;
      }
      expect(closed).toBe(true);
      const list = [{ type: 'assistant' }];
      const plain = observeAgentMessages({
        async *[Symbol.asyncIterator]() {
          yield* list;
        },
      });
      const out: unknown[] = [];
      for await (const m of plain) out.push(m);
      expect(out).toEqual(list);
      expect(() => observeAgentMessages([] as unknown as AsyncIterable<unknown>)).toThrow(
        'must be an async iterable',
      );
    } finally {
      trace.disable();
    }
  });
});
