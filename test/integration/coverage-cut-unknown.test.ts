/**
 * `/api/coverage` says what Claude Code (and a Claude Agent SDK app, which runs it) cannot send:
 * for a tool call cut at `max_tokens` it exports no tool span and no tool log, and its plain spans
 * carry only `stop_reason`, so a cut response cannot be told a tool call and is reported as a
 * warning. Data: a real Agent SDK 0.3.336 app's export of a cut `Write` call and a cut text
 * (test/fixtures/real/claude-agent-sdk-0.3.336/cut).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayCapture } from '../helpers/capture-replay.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const DIR = join(import.meta.dirname, '../fixtures/real/claude-agent-sdk-0.3.336/cut');

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ loops: false });
  await replayCapture(server.url, DIR);
});

afterAll(async () => server?.close());

describe('/api/coverage of cut responses Claude Code cannot tell apart', () => {
  it('names the two cut responses and what would tell a cut tool call', async () => {
    const body = (await (await fetch(`${server.url}/api/coverage`)).json()) as {
      producers: Array<{
        producer: string;
        covered: Record<string, number>;
        blind: string[];
        hints: Record<string, string>;
      }>;
    };
    const producer = body.producers.find((p) => p.producer === 'claude_code')!;
    // every call has its finish reason: the detector is not blind...
    expect(producer.covered.output_cut_off).toBe(3);
    expect(producer.blind).not.toContain('output_cut_off');
    // ...but two cuts could be a text or a tool call
    const hint = producer.hints.output_cut_off!;
    expect(hint).toMatch(
      /^2 responses cut at the output limit: .*exports nothing for a tool call cut there/,
    );
    expect(hint).toContain('warning, not as a critical cut tool call');
    expect(hint).toContain('ENABLE_BETA_TRACING_DETAILED=1');
    expect(hint).toContain('rotscope claude-code install');
  });
});
