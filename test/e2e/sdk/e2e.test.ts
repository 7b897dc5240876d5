/**
 * End to end: an application using the real `@anthropic-ai/sdk` against loopback fake providers,
 * the real OpenTelemetry Node SDK with `RotscopeSpanProcessor` and the OTLP/HTTP exporter, and a
 * real `rotscope serve` child process. Each conversation's usage drops from 140k to 30k tokens:
 * where the application called `markCompaction` the finding is `history_lost` info, kind
 * `compacted`; where it did not, the `lost` warning. Two flows run in parallel (no cross-talk),
 * one marks inside nested async work, one marks in a child task (its parent's call not flagged).
 */
import Anthropic from '@anthropic-ai/sdk';
import { trace } from '@opentelemetry/api';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RotscopeSpanProcessor, markCompaction } from '../../../packages/sdk/src/index.ts';
import { startChildServer, type ChildServer } from '../../helpers/child-server.ts';
import { startFakeLlm, type FakeLlm, type ScriptedUsage } from '../../helpers/fake-llm.ts';
import { startTelemetry } from '../../helpers/producers/otel.ts';
import { createTestDatabase } from '../../helpers/store.ts';

const MODEL = 'claude-sonnet-4-6';
/** 100k, 140k, then 30k: a drop of 110k tokens (79%), far over history_lost's thresholds. */
const USAGES: ScriptedUsage[] = [
  { fresh: 100_000, output: 400 },
  { fresh: 140_000, output: 400 },
  { fresh: 30_000, output: 400 },
];

interface Finding {
  conversationId: string;
  detector: string;
  severity: string;
  kind: string | null;
}

let server: ChildServer;
let dataDir: string;
const llms: FakeLlm[] = [];

/** One conversation on its own fake provider (replies are consumed in arrival order). */
async function conversation(id: string) {
  const llm = await startFakeLlm();
  llms.push(llm);
  llm.enqueue(...USAGES.map((usage) => ({ expect: 'messages' as const, text: 'ok', usage })));
  const client = new Anthropic({ apiKey: 'sk-ant-fake', baseURL: llm.url, maxRetries: 0 });
  const messages: Anthropic.Messages.MessageParam[] = [];
  return {
    llm,
    /** One turn: the SDK's own `anthropic.messages.create` span, conversation id from the option. */
    async call(text: string): Promise<void> {
      messages.push({ role: 'user', content: text });
      const reply = await client.messages.create(
        { model: MODEL, max_tokens: 1024, messages: [...messages] },
        { openTelemetry: { conversationId: id } },
      );
      messages.push({ role: 'assistant', content: reply.content });
    },
  };
}

async function findings(): Promise<Finding[]> {
  const res = await fetch(`${server.url}/api/findings?limit=100`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: Finding[] }).items;
}

/** Waits until every listed conversation has its history_lost finding. */
async function historyLostOf(ids: string[]): Promise<Record<string, [string, string | null]>> {
  for (const deadline = Date.now() + 30_000; ;) {
    const got: Record<string, [string, string | null]> = {};
    for (const f of await findings()) {
      if (f.detector === 'history_lost' && ids.includes(f.conversationId)) {
        got[f.conversationId] = [f.severity, f.kind];
      }
    }
    if (Object.keys(got).length === ids.length || Date.now() > deadline) return got;
    await sleep(100);
  }
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-sdk-e2e-'));
  const url = await createTestDatabase();
  server = await startChildServer({
    ...(url ? { DATABASE_URL: url } : { ROTSCOPE_DATA_DIR: dataDir }),
    ROTSCOPE_EVALUATOR_QUIET_MS: '100',
    ROTSCOPE_EVALUATOR_POLL_MS: '100',
  });
  const telemetry = startTelemetry(
    { rotscopeUrl: server.url, llmUrl: '' },
    'sdk-e2e-app',
    'proto',
    [new RotscopeSpanProcessor()],
  );
  try {
    const tracer = trace.getTracer('sdk-e2e-app');
    // Two parallel flows: "marked" summarizes its history (inside nested async work) before its
    // third call; "unmarked" drops the same amount without saying so.
    const marked = async () => {
      const c = await conversation('conv_sdk_marked');
      await c.call('one');
      await c.call('two');
      const compactHistory = async () => {
        await sleep(5); // the summarizer's own work
        markCompaction({
          trigger: 'auto',
          tokensBefore: 140_400,
          tokensAfter: 30_000,
          messagesKept: 2,
          summary: 'the user asked twice; both answered',
          conversationId: 'conv_sdk_marked',
        });
        await sleep(5);
        await c.call('three'); // the next LLM call, inside the nested work
      };
      await compactHistory();
    };
    const unmarked = async () => {
      const c = await conversation('conv_sdk_unmarked');
      await c.call('one');
      await c.call('two');
      await sleep(10);
      await c.call('three');
    };
    // "flag only": a mark with no conversation and no span: only the flag on the next call ties
    // it to the conversation. "child task": a child marks after its summarizer's await; its parent
    // does not see the mark, so the drop stays unexplained.
    const flagOnly = async () => {
      await sleep(1);
      const c = await conversation('conv_sdk_flag_only');
      await c.call('one');
      await c.call('two');
      markCompaction();
      await c.call('three');
    };
    const childTask = async () => {
      const c = await conversation('conv_sdk_child_task');
      await c.call('one');
      await c.call('two');
      await tracer.startActiveSpan('summarize (other conversation)', async (span) => {
        await sleep(1); // the summarizer's own work, then the mark, inside the child task
        markCompaction({ conversationId: 'conv_sdk_child_summary' });
        span.end();
      });
      await c.call('three');
    };
    await Promise.all([marked(), unmarked(), flagOnly(), childTask()]);
  } finally {
    await telemetry.shutdown();
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(llms.map((l) => l.close()));
  server?.process.kill('SIGTERM');
  if (server) await server.exited;
  rmSync(dataDir, { recursive: true, force: true });
});

describe('@rotscope/sdk end to end', () => {
  it('every scripted call reached its fake provider', () => {
    expect(llms.map((l) => [l.requests.length, l.pending()])).toEqual(Array(4).fill([3, 0]));
  });

  it('a marked drop is history_lost info, kind compacted; the same drop unmarked is the lost warning', async () => {
    const ids = [
      'conv_sdk_marked',
      'conv_sdk_unmarked',
      'conv_sdk_flag_only',
      'conv_sdk_child_task',
    ];
    expect(await historyLostOf(ids)).toEqual({
      conv_sdk_marked: ['info', 'compacted'],
      conv_sdk_unmarked: ['warning', 'lost'],
      conv_sdk_flag_only: ['info', 'compacted'],
      conv_sdk_child_task: ['warning', 'lost'],
    });
  });
});
