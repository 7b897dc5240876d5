/**
 * `/api/coverage`: each model of the recent calls with its window and where it came from, the
 * models no rule gives a window (not judged by context_too_full), and the Claude Code versions
 * the calls came from, with a warning for one newer than the newest verified (issue 19 §3).
 * Sent over OTLP/HTTP JSON to a running rotscope: the real Claude Code 2.1.332 capture
 * (claude-opus-5-5: 1M with no [1m] in its id), Claude Code spans of other versions, and plain
 * semconv spans of a known and an unknown model. A session whose Claude Code auto-compacted at
 * 169k is judged on 200k, though the catalog assumes 1M for its model.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const REAL = join(import.meta.dirname, '../fixtures/real/claude-code-2.1.332/reread');

let server: TestServer;
const NOW_MS = Date.now() - 60_000;
const ns = (ms: number) => `${BigInt(Math.round(ms)) * 1_000_000n}`;
let spanNo = 0;

type Value = string | number;
const attrs = (a: Record<string, Value>) =>
  Object.entries(a).map(([key, v]) => ({
    key,
    value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v },
  }));

/** One OTLP/JSON traces body: spans of one resource, a second apart. */
function traces(
  resource: Record<string, Value>,
  spans: Array<Record<string, Value>>,
  name: string,
) {
  return {
    resourceSpans: [
      {
        resource: { attributes: attrs(resource) },
        scopeSpans: [
          {
            scope: { name: 'test' },
            spans: spans.map((a) => {
              spanNo += 1;
              const start = NOW_MS + spanNo * 1_000;
              return {
                traceId: 'c'.repeat(24) + String(spanNo).padStart(8, '0'),
                spanId: String(spanNo).padStart(16, '0'),
                name,
                kind: 3,
                startTimeUnixNano: ns(start),
                endTimeUnixNano: ns(start + 500),
                attributes: attrs(a),
              };
            }),
          },
        ],
      },
    ],
  };
}

async function post(path: '/v1/traces' | '/v1/logs', body: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

/** A Claude Code llm_request span (native counts, cache excluded). */
const llmRequest = (session: string, model: string, cacheRead: number, requestId: string) => ({
  'session.id': session,
  model,
  input_tokens: 10,
  cache_read_tokens: cacheRead,
  cache_creation_tokens: 0,
  output_tokens: 100,
  request_id: requestId,
});

const get = async <T>(path: string): Promise<T> => {
  const res = await fetch(`${server.url}${path}`);
  expect(res.status).toBe(200);
  return (await res.json()) as T;
};

interface CoverageBody {
  models: Array<{
    model: string | null;
    window: number | null;
    windowSource: string | null;
    calls: number;
  }>;
  modelsWithoutWindow: string[];
  recentSince: string | null;
  claudeCode: {
    oldestSupported: string;
    newestVerified: string;
    versions: Array<{ version: string; status: string; calls: number; conversations: number }>;
    warning: string | null;
  };
}

beforeAll(async () => {
  server = await startTestServer({ config: { splitEvidenceSettleMs: 200 } });
  for (const file of readdirSync(REAL).sort()) {
    if (file.endsWith('-traces.json'))
      await post('/v1/traces', readFileSync(join(REAL, file), 'utf8'));
    if (file.endsWith('-logs.json')) await post('/v1/logs', readFileSync(join(REAL, file), 'utf8'));
  }
  // a Claude Code newer than the newest verified
  await post(
    '/v1/traces',
    traces(
      { 'service.name': 'claude-code', 'service.version': '2.1.400' },
      [llmRequest('s-new', 'claude-sonnet-4-6', 20_000, 'req_new')],
      'claude_code.llm_request',
    ),
  );
  // an older Claude Code on claude-opus-4-8, whose window the catalog only assumes (1M) for
  // that version: it auto-compacts at 169,431 tokens, where a 200k window compacts
  await post(
    '/v1/traces',
    traces(
      { 'service.name': 'claude-code', 'service.version': '2.1.120' },
      [
        llmRequest('s-old', 'claude-opus-4-8', 120_000, 'req_old_1'),
        llmRequest('s-old', 'claude-opus-4-8', 150_000, 'req_old_2'),
        llmRequest('s-old', 'claude-opus-4-8', 165_000, 'req_old_3'),
      ],
      'claude_code.llm_request',
    ),
  );
  await post('/v1/logs', {
    resourceLogs: [
      {
        resource: {
          attributes: attrs({ 'service.name': 'claude-code', 'service.version': '2.1.120' }),
        },
        scopeLogs: [
          {
            scope: { name: 'com.anthropic.claude_code.events' },
            logRecords: [
              {
                timeUnixNano: ns(NOW_MS + (spanNo + 1) * 1_000),
                observedTimeUnixNano: ns(NOW_MS + (spanNo + 1) * 1_000),
                body: { stringValue: 'claude_code.compaction' },
                attributes: attrs({
                  'event.name': 'compaction',
                  'session.id': 's-old',
                  trigger: 'auto',
                  success: 'true',
                  pre_tokens: 169_431,
                  post_tokens: 6_000,
                }),
              },
            ],
          },
        ],
      },
    ],
  });
  spanNo += 1; // the compaction's second
  // the session goes on after the compaction (the evaluator reads a compaction with the next call)
  await post(
    '/v1/traces',
    traces(
      { 'service.name': 'claude-code', 'service.version': '2.1.120' },
      [llmRequest('s-old', 'claude-opus-4-8', 8_000, 'req_old_4')],
      'claude_code.llm_request',
    ),
  );
  // plain semconv spans: a catalog model, and one no rule knows
  await post(
    '/v1/traces',
    traces(
      { 'service.name': 'agent-app', 'service.version': '9.9.9' },
      [
        {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.usage.input_tokens': 1_000,
          'gen_ai.conversation.id': 'g1',
        },
        {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'my-local-model',
          'gen_ai.usage.input_tokens': 9_000,
          'gen_ai.conversation.id': 'g2',
        },
        {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'my-local-model',
          'gen_ai.usage.input_tokens': 9_500,
          'gen_ai.conversation.id': 'g2',
        },
      ],
      'chat',
    ),
  );
});

afterAll(async () => {
  await server.close();
});

describe('/api/coverage: windows by model and Claude Code versions', () => {
  it('lists each model with its window and source, and the models without one', async () => {
    const body = await get<CoverageBody>('/api/coverage');
    expect(body.recentSince).toEqual(expect.any(String));
    const row = (model: string) => body.models.filter((m) => m.model === model);
    expect(row('claude-opus-5-5')).toEqual([
      expect.objectContaining({ window: 1_000_000, windowSource: 'catalog' }),
    ]);
    expect(row('claude-opus-5-5')[0]!.calls).toBeGreaterThan(1);
    expect(row('claude-sonnet-4-6')).toEqual([
      expect.objectContaining({ window: 200_000, windowSource: 'catalog', calls: 1 }),
    ]);
    // the calls are stored with the version's window; the compaction's is the detector's
    expect(row('claude-opus-4-8')).toEqual([
      expect.objectContaining({ window: 1_000_000, windowSource: 'assumed', calls: 4 }),
    ]);
    expect(row('gpt-4o')).toEqual([
      expect.objectContaining({ window: 128_000, windowSource: 'catalog', calls: 1 }),
    ]);
    expect(row('my-local-model')).toEqual([
      expect.objectContaining({ window: null, windowSource: null, calls: 2 }),
    ]);
    expect(body.modelsWithoutWindow).toEqual(['my-local-model']);
  });

  it('lists the Claude Code versions seen, newest first, and warns about the newer one', async () => {
    const { claudeCode } = await get<CoverageBody>('/api/coverage');
    expect(claudeCode).toMatchObject({ oldestSupported: '2.1.197', newestVerified: '2.1.332' });
    expect(claudeCode.versions.map((v) => [v.version, v.status, v.conversations])).toEqual([
      ['2.1.400', 'newer', 1],
      ['2.1.332', 'verified', 1],
      ['2.1.120', 'older', 1],
    ]);
    expect(claudeCode.versions.find((v) => v.version === '2.1.120')!.calls).toBe(4);
    expect(claudeCode.warning).toContain(
      '2.1.400 is newer than the newest version rotscope has verified (2.1.332)',
    );
    expect(claudeCode.warning).toContain(
      '2.1.120 is older than the oldest version rotscope supports (2.1.197)',
    );
    // the semconv app's service.version is no agent version
    expect(claudeCode.versions.map((v) => v.version)).not.toContain('9.9.9');
  });

  it('a window override gives the unknown model a window at once', async () => {
    const put = await fetch(`${server.url}/api/alerts/context-rot`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ windowOverrides: [{ model: 'my-local-*', window: 32_000 }] }),
    });
    expect(put.status).toBe(200);
    const body = await get<CoverageBody>('/api/coverage');
    expect(body.models.filter((m) => m.model === 'my-local-model')).toEqual([
      expect.objectContaining({ window: 32_000, windowSource: 'override', calls: 2 }),
    ]);
    expect(body.modelsWithoutWindow).toEqual([]);
    await fetch(`${server.url}/api/alerts/context-rot`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ windowOverrides: [] }),
    });
  });

  it("judges the auto-compacted session on 200k: context_too_full from the compaction's window", async () => {
    let finding: { summary: string; details: { fullestCall: Record<string, unknown> } } | undefined;
    await vi.waitFor(
      async () => {
        const { items } = await get<{ items: Array<{ detector: string; conversationId: string }> }>(
          '/api/findings?limit=100',
        );
        finding = items.find(
          (f) => f.detector === 'context_too_full' && f.conversationId === 's-old',
        ) as typeof finding;
        expect(finding).toBeDefined();
      },
      { timeout: 20_000, interval: 200 },
    );
    expect(finding!.details.fullestCall).toMatchObject({
      usageTokens: 165_010,
      window: 200_000,
      windowSource: 'compaction',
    });
    expect(finding!.summary).toContain("Claude Code's automatic compaction at 169,431 tokens");
    // no finding for the 2.1.332 session on claude-opus-5-5 (a few thousand tokens of 1M)
    const { items } = await get<{ items: Array<{ detector: string; model: string | null }> }>(
      '/api/findings?limit=100',
    );
    expect(items.filter((f) => f.detector === 'context_too_full').map((f) => f.model)).toEqual([
      'claude-opus-4-8',
    ]);
  });
});
