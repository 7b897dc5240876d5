/**
 * `GET /api/conversations/:id` says where the conversation's evaluation stands
 * (`evaluation: {pending, judgedThrough, error}`): pending from the moment a call is stored until
 * an evaluation has judged it, again when a later call arrives. A client (a script, the real-CLI
 * suites' settledFindings) waits for `pending: false` instead of waiting for the findings to stop
 * changing. The evaluator loop is off here; `evaluateNow` is the evaluation. On PGlite, or on
 * PostgreSQL with DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateNow } from '../../src/evaluator/now.ts';
import { jsonRequest, jsonSpan } from '../helpers/otlp-bodies.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ loops: false });
}, 120_000);
afterAll(async () => {
  await server?.close();
});

const START_MS = Date.UTC(2026, 10, 2, 9, 0, 0);

/** POSTs the `n`-th call of conversation `id` (a minute apart) to /v1/traces. */
async function postCall(id: string, n: number): Promise<void> {
  const span = jsonSpan({
    traceId: `${n}`.padStart(32, 'a'),
    spanId: `${n}`.padStart(16, 'b'),
    startNs: BigInt(START_MS + n * 60_000) * 1_000_000n,
    durationNs: 1_000_000_000n,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.conversation.id': id,
      'gen_ai.usage.input_tokens': 10_000 * n,
      'gen_ai.usage.output_tokens': 50,
    },
  });
  const res = await fetch(`${server.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(jsonRequest([span], { 'service.name': 'status-app' }, 'status-test')),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

async function evaluation(id: string) {
  const res = await fetch(`${server.url}/api/conversations/${id}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { evaluation: unknown }).evaluation;
}

describe('the evaluation status of a conversation', () => {
  it('is pending until an evaluation judged every stored call, and again after a new one', async () => {
    await postCall('status-1', 1);
    expect(await evaluation('status-1')).toEqual({
      pending: true,
      judgedThrough: null,
      error: null,
    });

    await evaluateNow(server.store, 'default', ['status-1']);
    expect(await evaluation('status-1')).toEqual({
      pending: false,
      judgedThrough: new Date(START_MS + 60_000).toISOString(),
      error: null,
    });

    await postCall('status-1', 2);
    expect(await evaluation('status-1')).toMatchObject({
      pending: true,
      judgedThrough: new Date(START_MS + 60_000).toISOString(),
    });
    await evaluateNow(server.store, 'default', ['status-1']);
    expect(await evaluation('status-1')).toMatchObject({
      pending: false,
      judgedThrough: new Date(START_MS + 120_000).toISOString(),
    });
  });

  it('is described in the OpenAPI document', async () => {
    const res = await fetch(`${server.url}/api/openapi.json`);
    const doc = JSON.stringify(await res.json());
    expect(doc).toContain('poll until pending is false to read settled findings');
  });
});
