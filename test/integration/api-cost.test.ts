/**
 * A call's cost when the producer reports one (issue 37 §2): a real Claude Code 2.1.332 session
 * (its OTLP bodies as the CLI sent them, test/fixtures/real/claude-code-one-session/2.1.332/)
 * posted over real HTTP to a real server on loopback, in three orders: as captured, every log
 * before any span, every span before any log. Claude Code reports `cost_usd` on its
 * `api_request` log events only, and a span of the same request takes the call's row, so the
 * cost must survive either order. `costUsd` on the conversation (list and detail) is the sum of
 * the fixture's `cost_usd` values, read from the files here; a conversation whose producer
 * reports no cost says null, never 0 and never a price rotscope made up.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayCapture } from '../helpers/capture-replay.ts';
import { jsonRequest, jsonSpan } from '../helpers/otlp-bodies.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import type { Answer } from '../../ui/src/api-types.ts';
import type { ConversationList } from '../../ui/src/conversations/types.ts';

type ConversationPage = Answer<'/api/conversations/{id}'>;

const DIR = fileURLToPath(
  new URL('../fixtures/real/claude-code-one-session/2.1.332/otlp/', import.meta.url),
);
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

interface Attr {
  key: string;
  value: { stringValue?: string; doubleValue?: number; intValue?: string | number };
}

/** The session id and every `api_request` event's request id and cost, read from the files. */
function reportedCosts(): { session: string; costs: Map<string, number> } {
  const costs = new Map<string, number>();
  let session = '';
  for (const file of FILES.filter((f) => f.includes('-logs'))) {
    const body = JSON.parse(readFileSync(path.join(DIR, file), 'utf8')) as {
      resourceLogs: Array<{ scopeLogs: Array<{ logRecords: Array<{ attributes: Attr[] }> }> }>;
    };
    for (const rl of body.resourceLogs)
      for (const sl of rl.scopeLogs)
        for (const lr of sl.logRecords) {
          const a = new Map(lr.attributes.map((x) => [x.key, x.value]));
          if (a.get('event.name')?.stringValue !== 'api_request') continue;
          costs.set(a.get('request_id')!.stringValue!, a.get('cost_usd')!.doubleValue!);
          session = a.get('session.id')!.stringValue!;
        }
  }
  return { session, costs };
}

const { session: SESSION, costs: COSTS } = reportedCosts();
const TOTAL = [...COSTS.values()].reduce((a, b) => a + b, 0);

const ORDERS: Record<string, string[]> = {
  'as captured': FILES,
  'logs first': [
    ...FILES.filter((f) => f.includes('-logs')),
    ...FILES.filter((f) => !f.includes('-logs')),
  ],
  'spans first': [
    ...FILES.filter((f) => !f.includes('-logs')),
    ...FILES.filter((f) => f.includes('-logs')),
  ],
};

describe.each(Object.entries(ORDERS))('cost of a real Claude Code session, sent %s', (_, order) => {
  let server: TestServer;
  const get = async (p: string) =>
    (await fetch(`${server.url}${p}`)).json() as Promise<ConversationList & ConversationPage>;

  beforeAll(async () => {
    server = await startTestServer({ loops: false });
    await replayCapture(server.url, DIR, order);
    // a library conversation: no producer cost
    const library = jsonRequest(
      [
        jsonSpan({
          traceId: 'ab'.repeat(16),
          spanId: '00000000000000a1',
          startNs: BigInt(Date.now() - 60_000) * 1_000_000n,
          durationNs: 500_000_000n,
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': 'gpt-4o',
            'gen_ai.conversation.id': 'conv-library',
            'gen_ai.usage.input_tokens': 2_000,
            'gen_ai.usage.output_tokens': 40,
          },
        }),
      ],
      { 'service.name': 'agent-app' },
      'api-cost-test',
    );
    const response = await fetch(`${server.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(library),
    });
    expect(response.status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it('stores each request once with the cost its log event reported', async () => {
    expect(COSTS.size).toBe(9);
    const { rows } = await sql<{ request_id: string; cost_usd: number | null; producer: string }>`
      SELECT request_id, cost_usd, producer FROM llm_calls
       WHERE conversation_id = ${SESSION} ORDER BY request_id`.execute(server.store.db);
    expect(rows.map((r) => r.request_id)).toEqual([...COSTS.keys()].sort());
    for (const row of rows) expect(row.cost_usd, row.request_id).toBe(COSTS.get(row.request_id));
    // the spans took the rows of the requests they describe: the cost is kept beside them
    expect(rows.some((r) => r.producer !== 'claude_code_log')).toBe(true);
  });

  it('sums it as costUsd on the conversation in the list and the detail; null without a reported cost', async () => {
    const list = await get('/api/conversations');
    const byId = new Map(list.items.map((c) => [c.id, c.costUsd]));
    expect(byId.get(SESSION)).toBeCloseTo(TOTAL, 12);
    expect(byId.get('conv-library')).toBeNull();
    const detail = await get(`/api/conversations/${SESSION}`);
    expect(detail.costUsd).toBeCloseTo(TOTAL, 12);
    expect(
      (detail.calls as Array<{ costUsd?: number }>).filter((c) => c.costUsd !== undefined),
    ).toHaveLength(9);
    expect((await get('/api/conversations/conv-library')).costUsd).toBeNull();
  });
});
