/**
 * `/api/coverage` per producer: spans captured from the real Langfuse and LangChain/OpenInference
 * packages (test/fixtures/real/, see their PROVENANCE.md) sent over OTLP/HTTP JSON to a running
 * rotscope; the coverage names the detector that is blind to a producer (Langfuse sends no finish
 * reason, so `output_cut_off` sees none of its calls).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postOtlp, replayCapture } from '../helpers/capture-replay.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const REAL = fileURLToPath(new URL('../fixtures/real/', import.meta.url));
const FIXTURES = [
  'langfuse/otlp-json_langfuse-openai_5.11.1.json',
  'langchain-openinference/otlp-json_langchain-openinference_4.1.1.json',
];

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ loops: false });
  for (const f of FIXTURES) await postOtlp(server.url, 'traces', readFileSync(REAL + f, 'utf8'));
});

afterAll(async () => {
  await server.close();
});

describe('/api/coverage by producer', () => {
  it('Langfuse: output_cut_off blind; OpenInference (LangChain): every detector sees its calls', async () => {
    const res = await fetch(`${server.url}/api/coverage`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { calls: number; producers: unknown };
    expect(body.calls).toBe(7);
    expect(body.producers).toEqual([
      {
        producer: 'langfuse',
        calls: 4,
        // Every call's input messages are captured: the two whose input holds no tool result
        // yet (the first call of each session) carry what tool_takeover needs all the same.
        covered: { context_too_full: 4, tool_takeover: 4, history_lost: 4, output_cut_off: 0 },
        blind: ['output_cut_off'],
        agent: null,
        hints: {
          output_cut_off: 'send gen_ai.response.finish_reasons on every chat span',
        },
      },
      {
        producer: 'openinference',
        calls: 3,
        covered: { context_too_full: 3, tool_takeover: 3, history_lost: 3, output_cut_off: 3 },
        blind: [],
        agent: null,
        hints: {},
      },
    ]);
  });
});

describe('/api/coverage of a Claude Code workspace (real 2.1.332 export, spans only)', () => {
  let claude: TestServer;
  beforeAll(async () => {
    claude = await startTestServer({ loops: false });
    // The spans alone: a user who turned on traces but not logs (no tool_result events).
    await replayCapture(claude.url, `${REAL}claude-code-2.1.332/reread`, [
      '002-traces.json',
      '003-traces.json',
    ]);
  });
  afterAll(async () => claude?.close());

  it("gives Claude Code's own knobs, not the SDK's attributes", async () => {
    const body = (await (await fetch(`${claude.url}/api/coverage`)).json()) as {
      detectors: Record<string, { hint: string; covered: number }>;
      producers: Array<{ producer: string; agent: string | null; hints: Record<string, string> }>;
    };
    const producer = body.producers.find((p) => p.producer === 'claude_code');
    expect(producer?.agent).toBe('Claude Code');
    const hints = Object.values(producer?.hints ?? {});
    expect(hints.length).toBeGreaterThan(0);
    for (const hint of hints) {
      expect(hint).not.toContain('gen_ai.input.messages');
      expect(hint).not.toContain('@rotscope/sdk');
      expect(hint).toContain('rotscope claude-code install');
    }
    // The page's own column says the same for the workspace (its calls are all Claude Code's).
    for (const [id, detector] of Object.entries(body.detectors))
      if (producer?.hints[id]) expect(detector.hint).toBe(producer.hints[id]);
    expect(producer?.hints.tool_takeover).toContain('OTEL_LOGS_EXPORTER=otlp');
  });
});

describe('/api/coverage of a Claude Code session set up as install does (real 2.1.332, traces and logs)', () => {
  let claude: TestServer;
  beforeAll(async () => {
    claude = await startTestServer({ loops: false });
    // The exports in the order they arrived: logs (api_request, tool_result events) and spans.
    await replayCapture(claude.url, `${REAL}claude-code-2.1.332/reread`, [
      '001-logs.json',
      '002-traces.json',
      '003-traces.json',
      '004-logs.json',
    ]);
  });
  afterAll(async () => claude?.close());

  it('counts every call covered for tool takeover, the first one (no tool result yet) included', async () => {
    const body = (await (await fetch(`${claude.url}/api/coverage`)).json()) as {
      calls: number;
      detectors: Record<string, { covered: number; share: number }>;
      producers: Array<{
        producer: string;
        agent: string | null;
        calls: number;
        covered: Record<string, number>;
        blind: string[];
        hints: Record<string, string>;
      }>;
    };
    expect(body.calls).toBeGreaterThan(1);
    // the first call of the session has no tool result in its input: nothing sizes a tool there
    const stored = await claude.store.db
      .selectFrom('llm_calls')
      .select(['start_ns', 'parts'])
      .orderBy('start_ns')
      .execute();
    expect(stored[0]?.parts ?? null).toBeNull();
    expect(body.detectors.tool_takeover).toMatchObject({ covered: body.calls, share: 1 });
    for (const producer of body.producers) {
      expect(producer.agent).toBe('Claude Code');
      expect(producer.covered.tool_takeover).toBe(producer.calls);
      expect(producer.blind).not.toContain('tool_takeover');
      expect(producer.hints.tool_takeover).toBeUndefined();
    }
  });
});
