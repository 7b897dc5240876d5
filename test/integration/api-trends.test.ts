/**
 * GET /api/trends and /api/trends/before-after (issue 37 §1) on a real server over real HTTP
 * on loopback, on the test database (PGlite, or PostgreSQL with DATABASE_URL). Known rows are
 * written to llm_calls, findings and guard_decisions; every answer is checked three ways: the
 * figures stated here, a SQL count written independently below, and the reporting_v1 views
 * (migration 0150) that must say the same.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LlmCall } from '../../src/model/calls.ts';
import type { FindingDraft } from '../../src/model/findings.ts';
import { llmCallRow } from '../../src/store/timeline.ts';
import { callAt, seedFinding } from '../helpers/trends-seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import type { BeforeAfter, Trends } from '../../ui/src/trends/types.ts';

const DAY_MS = 86_400_000;
/** Midnight UTC of today, and of `n` days ago. */
const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
const daysAgo = (n: number, hour = 10) => today - n * DAY_MS + hour * 3_600_000;
const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);

let server: TestServer;

async function insert(calls: LlmCall[], workspace = 'default') {
  await server.store.db
    .insertInto('llm_calls')
    .values(calls.map((c) => llmCallRow({ ...c, workspaceId: workspace })))
    .execute();
}

const finding = (conv: string, detector: FindingDraft['detector'], workspace = 'default') =>
  seedFinding(server.store.db, conv, detector, workspace);

/** Any answer of these routes: a trend, a before/after, or an error. */
type Answer = Trends & BeforeAfter & { error: string; message: string };

const get = async (path: string) => {
  const response = await fetch(`${server.url}${path}`);
  return { status: response.status, body: (await response.json()) as Answer };
};

beforeAll(async () => {
  server = await startTestServer({ loops: false });
  const db = server.store.db;
  await db.insertInto('workspaces').values({ id: 'other' }).execute();
  // A: gpt-4o two days ago; 100k and 120k of 128k are over 0.7 (89,600), 50k is not
  await insert([
    callAt('conv-a', daysAgo(2), 0, {
      requestModel: 'gpt-4o',
      responseModel: 'gpt-4o',
      context: 50_000,
      window: 128_000,
    }),
    callAt('conv-a', daysAgo(2), 1, {
      requestModel: 'gpt-4o',
      responseModel: 'gpt-4o',
      context: 100_000,
      window: 128_000,
    }),
    callAt('conv-a', daysAgo(2), 2, {
      requestModel: 'gpt-4o',
      responseModel: 'gpt-4o',
      context: 120_000,
      window: 128_000,
    }),
  ]);
  await finding('conv-a', 'context_too_full');
  await finding('conv-a', 'output_cut_off');
  await finding('conv-a', 'output_cut_off');
  // B: Claude Code two days ago with reported costs; its first call is a side call of another
  // model (the key is the first MAIN call's model), and a call without a window adds nothing
  await insert([
    callAt('conv-b', daysAgo(2, 11), 0, {
      producer: 'claude_code_log',
      agentVersion: '2.1.332',
      sideCall: 'title',
      requestModel: 'claude-haiku-4-5',
      responseModel: 'claude-haiku-4-5',
      context: 190_000,
      window: 200_000,
      costUsd: 0.125,
    }),
    callAt('conv-b', daysAgo(2, 11), 1, {
      producer: 'claude_code_log',
      agentVersion: '2.1.332',
      requestModel: 'claude-sonnet-4-6',
      responseModel: 'claude-sonnet-4-6',
      context: 150_000,
      window: 200_000,
      costUsd: 0.25,
    }),
    callAt('conv-b', daysAgo(2, 11), 2, {
      producer: 'claude_code_log',
      agentVersion: '2.1.332',
      requestModel: 'claude-sonnet-4-6',
      responseModel: 'claude-sonnet-4-6',
      context: 200_000,
      window: null,
      costUsd: 0.5,
    }),
  ]);
  await db
    .insertInto('conversations')
    .values({ workspace_id: 'default', id: 'conv-b', project: '/srv/app/alpha-svc' })
    .execute();
  await finding('conv-b', 'history_lost');
  // C: gpt-4o yesterday, under the threshold
  await insert([
    callAt('conv-c', daysAgo(1), 0, {
      requestModel: 'gpt-4o',
      responseModel: 'gpt-4o',
      context: 10_000,
      window: 128_000,
    }),
  ]);
  await finding('conv-c', 'tool_takeover');
  // D: begun 40 days ago, a call yesterday too: outside a 30-day range whole
  await insert([
    callAt('conv-d', daysAgo(40), 0, { context: 190_000, window: 200_000 }),
    callAt('conv-d', daysAgo(1), 0, { context: 190_000, window: 200_000 }),
  ]);
  await finding('conv-d', 'context_too_full');
  // another workspace's conversation yesterday: never seen
  await insert([callAt('conv-x', daysAgo(1), 0, { context: 190_000, window: 200_000 })], 'other');
  await finding('conv-x', 'context_too_full', 'other');
}, 120_000);
afterAll(async () => {
  await server?.close();
});

/** The same figures counted in SQL from the raw tables, written apart from src/store/trends.ts. */
async function countedInSql(sinceMs: number, threshold: number) {
  const sinceNs = String(BigInt(sinceMs) * 1_000_000n);
  const { rows } = await sql<{
    day: string;
    model: string | null;
    conversations: string;
    calls: string;
    cost: number | null;
    over: string | null;
    ctf: string;
    tt: string;
    hl: string;
    oc: string;
  }>`
    WITH firsts AS (
      SELECT conversation_id, min(start_ns) AS first_ns FROM llm_calls
       WHERE workspace_id = 'default' GROUP BY conversation_id
      HAVING min(start_ns) >= ${sinceNs}::int8
    ), keyed AS (
      SELECT f.conversation_id, f.first_ns,
             (SELECT coalesce(response_model, request_model) FROM llm_calls m
               WHERE m.workspace_id = 'default' AND m.conversation_id = f.conversation_id
                 AND coalesce(response_model, request_model) IS NOT NULL
               ORDER BY side_call IS NOT NULL, start_ns, span_id LIMIT 1) AS model
        FROM firsts f
    )
    SELECT to_char(to_timestamp(k.first_ns / 1e9) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, k.model,
           count(*) AS conversations,
           sum((SELECT count(*) FROM llm_calls c WHERE c.workspace_id = 'default' AND c.conversation_id = k.conversation_id)) AS calls,
           sum((SELECT sum(cost_usd) FROM llm_calls c WHERE c.workspace_id = 'default' AND c.conversation_id = k.conversation_id)) AS cost,
           sum((SELECT sum(context_tokens) FROM llm_calls c WHERE c.workspace_id = 'default' AND c.conversation_id = k.conversation_id
                  AND context_window IS NOT NULL AND context_tokens >= ${threshold}::float8 * context_window)) AS over,
           sum((SELECT count(*) FROM findings f WHERE f.workspace_id = 'default' AND f.conversation_id = k.conversation_id AND detector = 'context_too_full')) AS ctf,
           sum((SELECT count(*) FROM findings f WHERE f.workspace_id = 'default' AND f.conversation_id = k.conversation_id AND detector = 'tool_takeover')) AS tt,
           sum((SELECT count(*) FROM findings f WHERE f.workspace_id = 'default' AND f.conversation_id = k.conversation_id AND detector = 'history_lost')) AS hl,
           sum((SELECT count(*) FROM findings f WHERE f.workspace_id = 'default' AND f.conversation_id = k.conversation_id AND detector = 'output_cut_off')) AS oc
      FROM keyed k GROUP BY 1, 2 ORDER BY 1, 2`.execute(server.store.db);
  return rows.map((r) => ({
    bucket: r.day,
    key: r.model,
    conversations: Number(r.conversations),
    calls: Number(r.calls),
    findings: {
      context_too_full: Number(r.ctf),
      tool_takeover: Number(r.tt),
      history_lost: Number(r.hl),
      output_cut_off: Number(r.oc),
    },
    costUsd: r.cost === null ? null : Number(r.cost),
    tokensOverThreshold: r.over === null ? 0 : Number(r.over),
  }));
}

/** The view's answer for the same range, summed per day and model. */
async function fromView(sinceDay: string) {
  const { rows } = await sql<Record<string, unknown>>`
    SELECT day::text AS day, model, count(*) AS conversations, sum(calls) AS calls,
           sum(cost_usd) AS cost, sum(tokens_over_threshold) AS over,
           sum(context_too_full) AS ctf, sum(tool_takeover) AS tt, sum(history_lost) AS hl,
           sum(output_cut_off) AS oc
      FROM reporting_v1.conversation_trends
     WHERE workspace_id = 'default' AND day >= ${sinceDay}::date
     GROUP BY 1, 2 ORDER BY 1, 2`.execute(server.store.db);
  return rows.map((r) => ({
    bucket: r['day'],
    key: r['model'],
    conversations: Number(r['conversations']),
    calls: Number(r['calls']),
    findings: {
      context_too_full: Number(r['ctf']),
      tool_takeover: Number(r['tt']),
      history_lost: Number(r['hl']),
      output_cut_off: Number(r['oc']),
    },
    costUsd: r['cost'] === null ? null : Number(r['cost']),
    tokensOverThreshold: Number(r['over']),
  }));
}

describe('GET /api/trends', () => {
  it('sums each conversation into the day of its first call, by model; the SQL count and the view agree', async () => {
    const { status, body } = await get('/api/trends?by=model&bucket=day&days=30');
    expect(status).toBe(200);
    expect(body.usageThreshold).toBe(0.7);
    expect(body.from).toBe(new Date(today - 29 * DAY_MS).toISOString());
    const none = { context_too_full: 0, tool_takeover: 0, history_lost: 0, output_cut_off: 0 };
    expect(body.items).toEqual([
      {
        bucket: dayText(daysAgo(2)),
        key: 'claude-sonnet-4-6',
        conversations: 1,
        calls: 3,
        findings: { ...none, history_lost: 1 },
        costUsd: 0.875,
        // 190k of 200k (the side call) and 150k of 200k; the 200k call has no window
        tokensOverThreshold: 340_000,
      },
      {
        bucket: dayText(daysAgo(2)),
        key: 'gpt-4o',
        conversations: 1,
        calls: 3,
        findings: { ...none, context_too_full: 1, output_cut_off: 2 },
        costUsd: null,
        tokensOverThreshold: 220_000,
      },
      {
        bucket: dayText(daysAgo(1)),
        key: 'gpt-4o',
        conversations: 1,
        calls: 1,
        findings: { ...none, tool_takeover: 1 },
        costUsd: null,
        tokensOverThreshold: 0,
      },
    ]);
    expect(body.items).toEqual(await countedInSql(today - 29 * DAY_MS, 0.7));
    expect(body.items).toEqual(await fromView(dayText(today - 29 * DAY_MS)));
  });

  it('splits by agent, agent version and project (null when they do not say), and by week', async () => {
    const keys = async (by: string) =>
      (await get(`/api/trends?by=${by}&days=30`)).body.items.map(
        (i: { bucket: string; key: string | null; conversations: number }) => [
          i.bucket,
          i.key,
          i.conversations,
        ],
      );
    const d2 = dayText(daysAgo(2));
    const d1 = dayText(daysAgo(1));
    expect(await keys('agent')).toEqual([
      [d2, 'Claude Code', 1],
      [d2, null, 1],
      [d1, null, 1],
    ]);
    expect(await keys('agentVersion')).toEqual([
      [d2, 'Claude Code 2.1.332', 1],
      [d2, null, 1],
      [d1, null, 1],
    ]);
    expect(await keys('project')).toEqual([
      [d2, '/srv/app/alpha-svc', 1],
      [d2, null, 1],
      [d1, null, 1],
    ]);
    const weekly = (await get('/api/trends?by=project&bucket=week&days=30')).body.items;
    const total = weekly.reduce(
      (n: number, i: { conversations: number }) => n + i.conversations,
      0,
    );
    expect(total).toBe(3);
    for (const item of weekly) expect(new Date(`${item.bucket}T00:00:00Z`).getUTCDay()).toBe(1);
    // one day is today only, when nothing began; two days hold yesterday's
    expect((await get('/api/trends?days=1')).body.items).toEqual([]);
    expect((await get('/api/trends?days=2')).body.items).toHaveLength(1);
  });

  it('counts tokens over the threshold the workspace sets now; the view follows it too', async () => {
    const put = await fetch(`${server.url}/api/alerts/context-rot`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ thresholds: { usageThreshold: 0.8, usageCritical: 0.9 } }),
    });
    expect(put.status, await put.clone().text()).toBe(200);
    try {
      const { body } = await get('/api/trends?days=30');
      expect(body.usageThreshold).toBe(0.8);
      expect(body.items.map((i: { tokensOverThreshold: number }) => i.tokensOverThreshold)).toEqual(
        [190_000, 120_000, 0],
      );
      expect(body.items).toEqual(await countedInSql(today - 29 * DAY_MS, 0.8));
      expect(body.items).toEqual(await fromView(dayText(today - 29 * DAY_MS)));
    } finally {
      await sql`DELETE FROM alert_settings WHERE workspace_id = 'default'`.execute(server.store.db);
    }
  });

  it('answers bad input with a 400 that says what is wrong', async () => {
    for (const [query, says] of [
      ['by=team', 'querystring/by'],
      ['bucket=month', 'querystring/bucket'],
      ['days=0', 'querystring/days'],
      ['days=367', 'querystring/days'],
      ['days=ten', 'querystring/days'],
      ['days=1.5', 'querystring/days'],
      ['since=2026-01-01', 'querystring/since is not a known field'],
    ] as const) {
      const { status, body } = await get(`/api/trends?${query}`);
      expect(status, query).toBe(400);
      expect(body.error, query).toBe('bad_request');
      expect(body.message, query).toContain(says);
    }
  });
});

describe('GET /api/trends/before-after', () => {
  it('splits the conversations at a date and says plainly when there are too few', async () => {
    const { status, body } = await get(`/api/trends/before-after?at=${dayText(daysAgo(1))}&days=3`);
    expect(status).toBe(200);
    expect(body.at).toBe(new Date(today - DAY_MS).toISOString());
    expect(body.atSource).toBe('date');
    expect(body.before).toMatchObject({
      conversations: 2,
      calls: 6,
      findings: { context_too_full: 1, tool_takeover: 0, history_lost: 1, output_cut_off: 2 },
      per100: { context_too_full: 50, tool_takeover: 0, history_lost: 50, output_cut_off: 100 },
      costUsd: 0.875,
      tokensOverThreshold: 560_000,
      enough: false,
    });
    expect(body.after).toMatchObject({ conversations: 1, calls: 1, enough: false, costUsd: null });
    expect(body.after.per100.tool_takeover).toBe(100);
    expect(body.verdict).toBe(
      'Too few conversations to tell: 2 conversations before and 1 after; at least 20 are needed on each side.',
    );
  });

  it('without a guard decision, `at=guard` is a 404 that says to pick a date', async () => {
    const { status, body } = await get('/api/trends/before-after?at=guard');
    expect(status).toBe(404);
    expect(body.message).toContain('no guard decision');
  });

  it('at the first guard decision, with enough conversations on each side, compares the rates', async () => {
    // 60 days ago: 20 conversations in the 5 days before (10 with a context_too_full), 25 in
    // the 5 days from it (5 with one); the first guard decision at noon of that day
    const guardMs = daysAgo(60, 12);
    const calls: LlmCall[] = [];
    for (let i = 0; i < 20; i++)
      calls.push(callAt(`old-${i}`, guardMs - (1 + (i % 4)) * DAY_MS, 0, {}));
    for (let i = 0; i < 25; i++)
      calls.push(callAt(`new-${i}`, guardMs + (i % 4) * DAY_MS + 1000, 0, {}));
    await insert(calls);
    for (let i = 0; i < 10; i++) await finding(`old-${i}`, 'context_too_full');
    for (let i = 0; i < 5; i++) await finding(`new-${i}`, 'context_too_full');
    for (const [span, ms] of [
      ['g2', guardMs + DAY_MS],
      ['g1', guardMs],
    ] as const)
      await server.store.db
        .insertInto('guard_decisions')
        .values({
          workspace_id: 'default',
          conversation_id: 'new-0',
          span_id: span,
          at_ns: String(BigInt(ms) * 1_000_000n),
          action: 'narrowed',
          tool: 'Read',
          result_tokens: 10_000,
          budget_tokens: 2_000,
          kept_out_tokens: 8_000,
        })
        .execute();
    const { status, body } = await get('/api/trends/before-after?at=guard&days=5');
    expect(status).toBe(200);
    expect(body.at).toBe(new Date(guardMs).toISOString());
    expect(body.atSource).toBe('guard');
    expect(body.before).toMatchObject({ conversations: 20, enough: true });
    expect(body.before.per100.context_too_full).toBe(50);
    expect(body.after).toMatchObject({ conversations: 25, enough: true });
    expect(body.after.per100.context_too_full).toBe(20);
    expect(body.verdict).toBe(
      'Enough conversations to compare: 20 conversations before and 25 after.',
    );
    // the same split counted in SQL
    const { rows } = await sql<{ side: string; conversations: string; ctf: string }>`
      WITH firsts AS (SELECT conversation_id, min(start_ns) AS first_ns FROM llm_calls
                       WHERE workspace_id = 'default' GROUP BY conversation_id)
      SELECT CASE WHEN first_ns < ${String(BigInt(guardMs) * 1_000_000n)}::int8 THEN 'before' ELSE 'after' END AS side,
             count(*) AS conversations,
             sum((SELECT count(*) FROM findings f WHERE f.workspace_id = 'default'
                   AND f.conversation_id = firsts.conversation_id AND detector = 'context_too_full')) AS ctf
        FROM firsts
       WHERE first_ns >= ${String(BigInt(guardMs - 5 * DAY_MS) * 1_000_000n)}::int8
         AND first_ns < ${String(BigInt(guardMs + 5 * DAY_MS) * 1_000_000n)}::int8
       GROUP BY 1 ORDER BY 1`.execute(server.store.db);
    expect(rows.map((r) => [r.side, Number(r.conversations), Number(r.ctf)])).toEqual([
      ['after', body.after.conversations, body.after.findings.context_too_full],
      ['before', body.before.conversations, body.before.findings.context_too_full],
    ]);
  });

  it('answers bad input with a 400 that says what is wrong', async () => {
    for (const [query, says] of [
      ['', 'querystring/at'],
      ['at=yesterday', 'querystring/at'],
      ['at=2026-13-01', 'querystring/at'],
      ['at=2026-11-01&days=0', 'querystring/days'],
      ['at=2026-11-01&days=400', 'querystring/days'],
    ] as const) {
      const { status, body } = await get(`/api/trends/before-after?${query}`);
      expect(status, query).toBe(400);
      expect(body.message, query).toContain(says);
    }
  });
});
