/**
 * Conversations sent by real producers (the OpenTelemetry SDK with GenAI semantic-convention
 * attributes over the real OTLP exporter, and the simulated Claude Code of the producer
 * harness) produce exactly the expected findings: every detector, every severity, and none
 * for a healthy conversation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.ts';
import { agentConversation, tracerProvider } from '../helpers/otel.ts';
import { FINDING_SESSION, TOOLS_SESSION, runClaudeCode } from '../helpers/producers/claude-code.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let llm: FakeLlm;

beforeAll(async () => {
  server = await startTestServer();
  llm = await startFakeLlm();
});
afterAll(async () => {
  await server?.close();
  await llm?.close();
});

const text = (n: number) => 'x'.repeat(n);

/** A history whose `search` results take most of the input and stay there. */
function searchHistory(results: number): unknown[] {
  const messages: unknown[] = [{ role: 'user', parts: [{ type: 'text', content: text(400) }] }];
  for (let i = 0; i < results; i++) {
    messages.push({
      role: 'assistant',
      parts: [{ type: 'tool_call', id: `c${i}`, name: 'search', arguments: {} }],
    });
    messages.push({
      role: 'tool',
      parts: [{ type: 'tool_call_response', id: `c${i}`, response: text(3_000) }],
    });
  }
  return messages;
}

interface FindingRow {
  conversation_id: string;
  detector: string;
  severity: string;
  kind: string | null;
}

/**
 * The findings once at least `expected` exist and the evaluator has nothing left to do: every
 * conversation evaluated and not dirty (a finding is written in the evaluation that clears the
 * mark), so no finding is still to come.
 */
async function findingsSettled(expected: number): Promise<FindingRow[]> {
  let rows: FindingRow[] = [];
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    rows = await server.store.db
      .selectFrom('findings')
      .select(['conversation_id', 'detector', 'severity', 'kind'])
      .orderBy('conversation_id')
      .orderBy('detector')
      .execute();
    const unsettled = await server.store.db
      .selectFrom('conversations')
      .select('id')
      .where((eb) => eb.or([eb('dirty', '=', true), eb('evaluated_ns', 'is', null)]))
      .execute();
    if (rows.length >= expected && unsettled.length === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return rows;
}

describe('findings from real producers', () => {
  it('every detector and severity fires exactly where expected, and a healthy conversation stays quiet', async () => {
    const provider = tracerProvider({ url: server.url, protocol: 'protobuf' });
    const tracer = provider.getTracer('agent-app');
    const start = Date.now() - 60_000;
    agentConversation(
      tracer,
      'healthy',
      [{ input: 8_000 }, { input: 9_500 }, { input: 11_000 }],
      start,
    );
    agentConversation(tracer, 'context-warning', [{ input: 60_000 }, { input: 95_000 }], start); // 74%
    agentConversation(tracer, 'context-critical', [{ input: 90_000 }, { input: 115_000 }], start); // 70%, then 90%
    agentConversation(tracer, 'history-lost', [{ input: 50_000 }, { input: 20_000 }], start); // −60%, no marker
    agentConversation(
      tracer,
      'cut-tool-call',
      [
        { input: 10_000 },
        {
          input: 12_000,
          finish: 'length',
          output: [
            {
              role: 'assistant',
              parts: [{ type: 'tool_call', id: 'w1', name: 'write_file', arguments: {} }],
            },
          ],
        },
      ],
      start,
    );
    agentConversation(
      tracer,
      'tool-takeover',
      [1, 2, 3].map((results) => ({
        input: 4_000 + results * 800,
        messages: searchHistory(results),
      })),
      start,
    );
    await provider.shutdown();
    await runClaudeCode({ rotscopeUrl: server.url, llmUrl: llm.url });

    const rows = await findingsSettled(8);
    expect(rows.map((r) => [r.conversation_id, r.detector, r.severity, r.kind])).toEqual([
      [FINDING_SESSION, 'context_too_full', 'warning', null],
      [FINDING_SESSION, 'history_lost', 'info', 'compacted'],
      [FINDING_SESSION, 'output_cut_off', 'warning', null],
      ['context-critical', 'context_too_full', 'critical', null],
      ['context-warning', 'context_too_full', 'warning', null],
      ['cut-tool-call', 'output_cut_off', 'critical', null],
      ['history-lost', 'history_lost', 'warning', 'lost'],
      ['tool-takeover', 'tool_takeover', 'warning', null],
    ]);
    expect(
      rows.some((r) => r.conversation_id === 'healthy' || r.conversation_id === TOOLS_SESSION),
    ).toBe(false);
  });
});
