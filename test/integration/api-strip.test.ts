/**
 * The run view's endpoints over real HTTP on this run's database (PGlite, or PostgreSQL with
 * DATABASE_URL), fed by the real OpenTelemetry SDK exporter: the strip of a conversation and of
 * a run as columns, with its drops and marks; What was lost at a drop, with message text only
 * when the content was captured. A real Claude Code session (the 2.1.332 captures, replayed as
 * the CLI sent them): a tool's results on every call whose input still holds them, at the
 * shares its finding gives; context_too_full on the call its text is about; side calls flagged;
 * the colour bands from the workspace's knobs (issue 23 §6).
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { llmCallRow } from '../../src/store/timeline.ts';
import { call } from '../helpers/calls.ts';
import { sendClaudeCodeCapture } from '../helpers/claude-code-capture.ts';
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
  sideCalls: string[];
  findings: Array<{
    findingId: string;
    index: number | null;
    calls: number[];
    summary: string;
    detector: string;
    severity: string;
    kind: string | null;
    tokensLost: number | null;
  }>;
  thresholds: { usageThreshold: number; usageCritical: number };
  bands: { dimBelow: number; amberFrom: number; redFrom: number };
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
    expect(body.bands).toEqual({ dimBelow: 0.6, amberFrom: 0.7, redFrom: 0.85 });
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

/** The strip of a conversation once it has a finding of `detector`. */
async function stripWith(conversation: string, detector: string): Promise<Strip> {
  let strip: Strip | undefined;
  await vi.waitFor(
    async () => {
      const { body } = await get<Strip>(`/api/conversations/${conversation}/strip`);
      expect(body.findings?.some((f) => f.detector === detector)).toBe(true);
      strip = body;
    },
    { timeout: 30_000, interval: 100 },
  );
  return strip!;
}

/** Call `i`'s parts as `{ name: tokens }`. */
const partsAt = (strip: Strip, i: number): Record<string, number> => {
  const pairs = (strip.columns['parts'] as Array<number[] | null>)[i] ?? [];
  const out: Record<string, number> = {};
  for (let k = 0; k + 1 < pairs.length; k += 2) out[strip.parts[pairs[k]!]!] = pairs[k + 1]!;
  return out;
};

const grouped = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

describe('the strip of a real Claude Code session (2.1.332)', () => {
  let largeResults: string;
  let compaction: string;
  beforeAll(async () => {
    largeResults = await sendClaudeCodeCapture(server.url, '2.1.332', 'large-results');
    compaction = await sendClaudeCodeCapture(server.url, '2.1.332', 'compaction');
  }, 60_000);

  it("stacks a tool's results on every call whose input still holds them, at the shares its finding gives", async () => {
    const strip = await stripWith(largeResults, 'tool_takeover');
    const takeover = strip.findings.find((f) => f.detector === 'tool_takeover')!;
    // the three calls that made it fire, then the episode as it went on (issue 36 §5)
    expect(takeover.summary).toMatch(
      /^Results of tool Read took 60%, 74%, 67%, then up to \d+% of the input over 4 calls/,
    );
    // Claude Code reports each Read once, on the call after it (21,293 tokens from its bytes):
    // the strip holds them on every later call, as the detector does
    const context = strip.columns['context'] as number[];
    expect(context.map((_, i) => partsAt(strip, i)['tool:Read'] ?? 0)).toEqual([
      0, 21_293, 42_586, 42_586, 42_586,
    ]);
    expect(takeover.calls).toEqual([1, 2, 3, 4]);
    expect(takeover.index).toBe(1);
    const shares = takeover.calls.map(
      (i) => `${Math.floor((partsAt(strip, i)['tool:Read']! / context[i]!) * 100)}%`,
    );
    expect(takeover.summary).toContain(
      `took ${shares.slice(0, 3).join(', ')}, then up to ${shares[3]} of the input`,
    );
    // every call's parts still add up to its usage
    for (const [i, used] of context.entries()) {
      const sum = Object.values(partsAt(strip, i)).reduce((a, b) => a + b, 0);
      if (sum > 0) expect(sum).toBe(used);
    }
  });

  it('marks context_too_full on the fullest call, the one its text gives the usage of; the compaction calls are side calls', async () => {
    const strip = await stripWith(compaction, 'context_too_full');
    const full = strip.findings.find((f) => f.detector === 'context_too_full')!;
    const context = strip.columns['context'] as Array<number | null>;
    const window = strip.columns['window'] as Array<number | null>;
    const shares = context.map((c, i) => (c ?? 0) / (window[i] ?? Infinity));
    const fullest = shares.indexOf(Math.max(...shares));
    expect(full.index).toBe(fullest);
    expect(full.calls).toEqual([fullest]);
    expect(full.summary).toContain(
      `${grouped(context[fullest]!)} of ${grouped(window[fullest]!)} tokens`,
    );
    // Claude Code's compaction calls are side calls, flagged as such
    expect(strip.sideCalls).toEqual(['compact']);
    const side = strip.columns['side'] as number[];
    expect(side.filter((s) => s >= 0)).toHaveLength(2);
    expect(side[fullest]).toBe(-1);
  });

  it("sends the colour bands of the workspace's knobs, the numbers its detectors use", async () => {
    const put = async (thresholds: Record<string, number>) => {
      const response = await fetch(`${server.url}/api/alerts/context-rot`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ thresholds }),
      });
      expect(response.status).toBe(200);
    };
    await put({ usageThreshold: 0.4, usageCritical: 0.6 });
    try {
      const { body } = await get<Strip>(`/api/conversations/${compaction}/strip`);
      expect(body.thresholds).toEqual({ usageThreshold: 0.4, usageCritical: 0.6 });
      expect(body.bands).toEqual({ dimBelow: 0.4, amberFrom: 0.4, redFrom: 0.6 });
    } finally {
      await put({ usageThreshold: 0.7, usageCritical: 0.85 });
    }
    const { body } = await get<Strip>(`/api/conversations/${compaction}/strip`);
    expect(body.bands).toEqual({ dimBelow: 0.6, amberFrom: 0.7, redFrom: 0.85 });
  });
});
