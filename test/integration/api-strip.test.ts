/**
 * The run view's endpoints over real HTTP on this run's database (PGlite, or PostgreSQL with
 * DATABASE_URL), fed by the real OpenTelemetry SDK exporter: the strip of a conversation and of
 * a run as columns, with its drops and marks; What was lost at a drop, with message text only
 * when the content was captured.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { llmCallRow } from '../../src/store/timeline.ts';
import { call } from '../helpers/calls.ts';
import {
  COMPACTED,
  COMPACTED_USAGE,
  EARLY_ANSWER,
  EARLY_QUESTION,
  LOST_USAGE,
  LOST_WITH_CONTENT,
  LOST_WITHOUT_CONTENT,
  SECRET_FILE_TEXT,
  SUMMARY_TEXT,
  SYSTEM_PROMPT,
  sendRunViewConversations,
} from '../helpers/run-view-scenario.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

interface Strip {
  id: string;
  scope: string;
  calls: number;
  models: string[];
  streams: Array<{ key: string; agentId: string | null }>;
  parts: string[];
  columns: Record<string, unknown[]>;
  findings: Array<{
    findingId: string;
    index: number | null;
    detector: string;
    severity: string;
    kind: string | null;
    tokensLost: number | null;
  }>;
  thresholds: { usageThreshold: number; usageCritical: number };
}

interface WhatWasLost {
  kind: string;
  severity: string;
  tokensLost: number;
  partsLost: Array<{ part: string; name: string | null; tokens: number }>;
  dropped: {
    contentCaptured: boolean;
    count: number | null;
    messages: Array<{ role: string; text: string | null; chars: number }>;
  };
  replacement: { summary: string | null; tokensBefore: number | null } | null;
  systemPrompt: { textBefore: string | null; recorded: boolean; before: number | null };
}

let server: TestServer;

function getOnNewConnection(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          response.statusCode === 200
            ? resolve(Buffer.concat(chunks).toString())
            : reject(new Error(`status ${response.statusCode}`)),
        );
      })
      .on('error', reject);
  });
}

async function get<T>(path: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${server.url}${path}`);
  return { status: response.status, body: (await response.json()) as T };
}

async function dropOf(conversation: string): Promise<Strip['findings'][number]> {
  let drop: Strip['findings'][number] | undefined;
  await vi.waitFor(
    async () => {
      const { body } = await get<Strip>(`/api/conversations/${conversation}/strip`);
      drop = body.findings?.find((f) => f.detector === 'history_lost');
      expect(drop).toBeDefined();
    },
    { timeout: 30_000, interval: 100 },
  );
  return drop!;
}

beforeAll(async () => {
  // the 10,000 calls below are dated 2026-01-01: retention, which ages rows by their own time,
  // would prune them if its first run (10 s after start) came before the strip is read
  server = await startTestServer({ config: { retentionDays: 0 } });
  await sendRunViewConversations(server.url);
}, 60_000);
afterAll(async () => {
  await server?.close();
});

describe('GET /api/conversations/:id/strip', () => {
  it('returns one row per call in start order as columns, the streams, the parts and the drop', async () => {
    const drop = await dropOf(LOST_WITH_CONTENT);
    const { status, body } = await get<Strip>(`/api/conversations/${LOST_WITH_CONTENT}/strip`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: LOST_WITH_CONTENT, scope: 'conversation', calls: 4 });
    // the sub-agent's call (6,000) sits between the main thread's 52k and 15k
    expect(body.columns['context']).toEqual([LOST_USAGE[0], LOST_USAGE[1], 6_000, LOST_USAGE[2]]);
    expect(body.columns['window']).toEqual([128_000, 128_000, 128_000, 128_000]);
    expect(body.models).toEqual(['gpt-4o-2024-08-06']);
    expect(body.columns['model']).toEqual([0, 0, 0, 0]);
    const streams = (body.columns['stream'] as number[]).map((s) => body.streams[s]!.agentId);
    expect(streams).toEqual([null, null, 'ledger-researcher', null]);
    for (const column of Object.values(body.columns)) expect(column).toHaveLength(4);
    // parts: pairs of [part index, tokens] adding up to the call's usage
    const parts = body.columns['parts'] as number[][];
    const named = (pairs: number[]) =>
      Object.fromEntries(
        pairs.flatMap((v, i) => (i % 2 === 0 ? [[body.parts[v]!, pairs[i + 1]!]] : [])),
      );
    const second = named(parts[1]!);
    expect(Object.keys(second).sort()).toEqual(['messages', 'system', 'tool:read_file']);
    expect(Object.values(second).reduce((a, b) => a + b, 0)).toBe(LOST_USAGE[1]);
    // the drop is on the main thread's third call (index 3), lost, warning
    expect(drop).toMatchObject({
      index: 3,
      kind: 'lost',
      severity: 'warning',
      tokensLost: LOST_USAGE[1] - LOST_USAGE[2],
    });
    expect(body.thresholds).toEqual({ usageThreshold: 0.7, usageCritical: 0.85 });
    // no content in the strip
    expect(JSON.stringify(body)).not.toContain('ZEBRA');
  });

  it('answers 404 for a conversation it does not hold', async () => {
    const { status, body } = await get<{ error: string }>('/api/conversations/nope/strip');
    expect(status).toBe(404);
    expect(body.error).toBe('not_found');
  });

  it('serves a run by its trace id, with the compacted drop', async () => {
    const drop = await dropOf(COMPACTED);
    const { body: conversation } = await get<{ calls: Array<{ runId: string }> }>(
      `/api/conversations/${COMPACTED}`,
    );
    const runId = conversation.calls[0]!.runId;
    const { status, body } = await get<Strip>(`/api/runs/${runId}/strip`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ scope: 'run', calls: 2 });
    expect(body.columns['context']).toEqual([...COMPACTED_USAGE]);
    expect(body.findings.find((f) => f.detector === 'history_lost')).toMatchObject({
      findingId: drop.findingId,
      index: 1,
      kind: 'compacted',
      severity: 'info',
    });
  });

  it('serves 10,000 calls as columns without per-call objects', async () => {
    const rows = Array.from({ length: 10_000 }, (_, i) =>
      llmCallRow(
        call('big', i, {
          spanId: `big-${String(i).padStart(5, '0')}`,
          contextTokens: 1_000 + (i % 500) * 300,
        }),
      ),
    );
    // batches of 500 rows: PGlite binds at most 32,767 parameters in one statement
    for (let i = 0; i < rows.length; i += 500)
      await server.store.db
        .insertInto('llm_calls')
        .values(rows.slice(i, i + 500))
        .execute();
    // a connection of its own: seeding takes longer than the server keeps an idle one open
    const text = await getOnNewConnection(`${server.url}/api/conversations/big/strip`);
    const body = JSON.parse(text) as Strip;
    expect(body.calls).toBe(10_000);
    expect(body.columns['context']).toHaveLength(10_000);
    expect((body.columns['context'] as number[])[501]).toBe(1_300);
    // columns, not call objects: well under 100 bytes a call
    expect(text.length / 10_000).toBeLessThan(100);
  });
});

describe('GET /api/findings/:id/what-was-lost', () => {
  it('with content captured: the tokens, the parts that lost the most, the dropped messages and the system prompt', async () => {
    const drop = await dropOf(LOST_WITH_CONTENT);
    const { status, body } = await get<WhatWasLost>(
      `/api/findings/${drop.findingId}/what-was-lost`,
    );
    expect(status).toBe(200);
    expect(body.kind).toBe('lost');
    expect(body.tokensLost).toBe(LOST_USAGE[1] - LOST_USAGE[2]);
    expect(body.partsLost[0]).toMatchObject({ part: 'tool', name: 'read_file' });
    expect(body.dropped.contentCaptured).toBe(true);
    const texts = body.dropped.messages.map((m) => m.text ?? '');
    expect(body.dropped.count).toBe(4);
    expect(texts.some((t) => t.includes(EARLY_QUESTION))).toBe(true);
    expect(texts.some((t) => t.includes(EARLY_ANSWER))).toBe(true);
    expect(texts.some((t) => t.includes(SECRET_FILE_TEXT))).toBe(true);
    // the latest question was kept, so it is not among the dropped
    expect(texts.some((t) => t.includes('March'))).toBe(false);
    expect(body.replacement).toBeNull();
    expect(body.systemPrompt).toMatchObject({ recorded: true, textBefore: SYSTEM_PROMPT });
  });

  it('with content capture off: sizes only, no text', async () => {
    const drop = await dropOf(LOST_WITHOUT_CONTENT);
    const { body } = await get<WhatWasLost>(`/api/findings/${drop.findingId}/what-was-lost`);
    expect(body.tokensLost).toBe(LOST_USAGE[1] - LOST_USAGE[2]);
    expect(body.partsLost.map((p) => p.name ?? p.part)).toEqual([
      'read_file',
      'earlier_messages',
      'system',
    ]);
    expect(body.dropped).toEqual({
      contentCaptured: false,
      count: null,
      messages: [],
      chars: null,
    });
    expect(body.systemPrompt.textBefore).toBeNull();
    expect(body.systemPrompt.before).toBe(SYSTEM_PROMPT.length);
  });

  it('a compacted drop: what replaced it is the compaction and its summary', async () => {
    const drop = await dropOf(COMPACTED);
    const { body } = await get<WhatWasLost>(`/api/findings/${drop.findingId}/what-was-lost`);
    expect(body).toMatchObject({ kind: 'compacted', severity: 'info' });
    expect(body.replacement).toMatchObject({
      summary: SUMMARY_TEXT,
      tokensBefore: COMPACTED_USAGE[0],
    });
  });

  it('answers 404 for an unknown finding id and for a malformed one', async () => {
    expect((await get('/api/findings/999999/what-was-lost')).status).toBe(404);
    expect((await get('/api/findings/abc/what-was-lost')).status).toBe(404);
  });
});
