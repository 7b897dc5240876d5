/**
 * Context sizes without content, end to end: an application on the real `@anthropic-ai/sdk`
 * (content capture off, the SDK's default) against a loopback fake provider, the real OTel Node
 * SDK with `RotscopeSpanProcessor` and the OTLP exporter, a real `rotscope serve` child. The
 * same conversation, where `read_file` results take over the input, is sent to two fresh
 * servers: without `recordContextSizes`, tool_takeover coverage is 0 and nothing is found; with
 * it, coverage is 100% and tool_takeover names `read_file`.
 */
import Anthropic from '@anthropic-ai/sdk';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import {
  RotscopeSpanProcessor,
  measureContext,
  recordContextSizes,
} from '../../../packages/sdk/src/index.ts';
import { startChildServer, type ChildServer } from '../../helpers/child-server.ts';
import { startFakeLlm } from '../../helpers/fake-llm.ts';
import { startTelemetry } from '../../helpers/producers/otel.ts';
import { createTestDatabase } from '../../helpers/store.ts';

type MessageParam = Anthropic.Messages.MessageParam;
const SYSTEM = 'You are a careful coding agent.';
const FILE = 'x'.repeat(20_000);
const dirs: string[] = [];

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function startServer(): Promise<ChildServer> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-sdk-sizes-'));
  dirs.push(dataDir);
  const url = await createTestDatabase();
  return startChildServer({
    ...(url ? { DATABASE_URL: url } : { ROTSCOPE_DATA_DIR: dataDir }),
    ROTSCOPE_EVALUATOR_QUIET_MS: '100',
    ROTSCOPE_EVALUATOR_POLL_MS: '100',
  });
}

/** Three calls; before each, one more read_file result (20k characters) joins the input. */
function requests(): MessageParam[][] {
  const history: MessageParam[] = [{ role: 'user', content: 'Fix the parser.' }];
  const out: MessageParam[][] = [];
  for (let i = 1; i <= 3; i++) {
    history.push(
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: `toolu_${i}`, name: 'read_file', input: { path: `f${i}` } },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: FILE }],
      },
    );
    out.push([...history]);
  }
  return out;
}

/** Runs the conversation against a fresh server; returns its coverage and findings. */
async function run(withSizes: boolean) {
  const server = await startServer();
  const llm = await startFakeLlm();
  try {
    for (const fresh of [6_000, 11_000, 16_000]) {
      llm.enqueue({ expect: 'messages', text: 'reading on', usage: { fresh, output: 50 } });
    }
    const telemetry = startTelemetry(
      { rotscopeUrl: server.url, llmUrl: llm.url },
      'sizes-app',
      'proto',
      [new RotscopeSpanProcessor()],
    );
    try {
      const client = new Anthropic({ apiKey: 'sk-ant-fake', baseURL: llm.url, maxRetries: 0 });
      for (const messages of requests()) {
        const request = { model: 'claude-sonnet-4-6', max_tokens: 1024, system: SYSTEM, messages };
        if (withSizes) recordContextSizes(request);
        await client.messages.create(request, { openTelemetry: { conversationId: 'conv_sizes' } });
      }
    } finally {
      await telemetry.shutdown();
    }
    let coverage: {
      calls: number;
      detectors: { tool_takeover: { covered: number; share: number } };
    };
    let found: Array<{ detector: string; conversationId: string }> = [];
    for (const deadline = Date.now() + 20_000; ; await sleep(100)) {
      coverage = (await (await fetch(`${server.url}/api/coverage`)).json()) as typeof coverage;
      found = (
        (await (await fetch(`${server.url}/api/findings`)).json()) as { items: typeof found }
      ).items;
      const settled = coverage.calls === 3 && (!withSizes || found.length > 0);
      if (settled || Date.now() > deadline) break;
    }
    const tool = found.find((f) => f.detector === 'tool_takeover') as
      { detector: string; tool?: string | null; evidence?: unknown } | undefined;
    return { coverage, detectors: found.map((f) => f.detector).sort(), tool };
  } finally {
    await llm.close();
    server.process.kill('SIGTERM');
    await server.exited;
  }
}

describe('@rotscope/sdk context sizes', () => {
  it('measureContext: system, messages and each tool by name, in characters, no text', () => {
    const [, , third] = requests();
    expect(measureContext({ system: SYSTEM, messages: third! })).toEqual({
      unit: 'chars',
      system: SYSTEM.length,
      messages: 'Fix the parser.'.length + 3 * JSON.stringify({ path: 'f1' }).length + 3 * 20_000,
      tools: { read_file: 60_000 },
    });
    expect(
      measureContext({
        messages: [
          { role: 'system', content: 'sys' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'grep', arguments: '{}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: 'hits' },
        ],
      }),
    ).toEqual({ unit: 'chars', system: 3, messages: 6, tools: { grep: 4 } });
  });

  it('recordContextSizes refuses a bad unit or size', () => {
    expect(() => recordContextSizes({ unit: 'words' as 'chars' })).toThrow(
      '@rotscope/sdk recordContextSizes: unknown unit "words"; expected chars or tokens',
    );
    expect(() => recordContextSizes({ unit: 'tokens', tools: { a: -1 } })).toThrow(
      'tools.a must be a non-negative number',
    );
  });

  it('turns tool_takeover coverage from 0 to 100% with content capture off', async () => {
    const without = await run(false);
    expect(without.coverage.calls).toBe(3);
    expect(without.coverage.detectors.tool_takeover).toMatchObject({ covered: 0, share: 0 });
    expect(without.detectors).not.toContain('tool_takeover');

    const withSizes = await run(true);
    expect(withSizes.coverage.calls).toBe(3);
    expect(withSizes.coverage.detectors.tool_takeover).toMatchObject({ covered: 3, share: 1 });
    expect(withSizes.detectors).toContain('tool_takeover');
    expect(JSON.stringify(withSizes.tool)).toContain('read_file');
  }, 120_000);
});
