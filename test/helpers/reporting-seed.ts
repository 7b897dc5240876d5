/**
 * Known rows in the raw tables, for the reporting views' tests (test/integration/reporting-views
 * and grafana-dashboard): every value the views compute from them is stated here.
 * All rows are on SEED_DAY (UTC) in workspace `acme`. Also: the documented read-only role,
 * created and used as written in docs/reporting.md.
 */
import { randomBytes } from 'node:crypto';
import { sql, type Insertable } from 'kysely';
import pg from 'pg';
import type { Db } from '../../src/store/db.ts';
import type { FindingsTable, LlmCallsTable } from '../../src/store/schema.ts';
import type { TestStore } from './store.ts';

export const SEED_DAY = '2026-11-30';
/** 10:00 UTC on SEED_DAY, in Unix nanoseconds. */
const T0_NS = BigInt(Date.parse(`${SEED_DAY}T10:00:00Z`)) * 1_000_000n;
const at = (minutes: number) => new Date(Date.parse(`${SEED_DAY}T10:00:00Z`) + minutes * 60_000);

/** Ten gpt-4o calls of 10k … 100k context tokens in a 128k window (p50 55k, p90 91k). */
export const GPT_CONTEXTS = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100].map((k) => k * 1000);

export async function seedReporting(db: Db): Promise<{ channelId: string }> {
  await sql`INSERT INTO workspaces (id) VALUES ('acme') ON CONFLICT DO NOTHING`.execute(db);
  const call = (
    i: number,
    fields: {
      model: string;
      context: number | null;
      window: number | null;
      sideCall?: string;
      finish?: string;
      conversation?: string;
    },
  ): Insertable<LlmCallsTable> => ({
    workspace_id: 'acme',
    trace_id: 'a'.repeat(32),
    span_id: i.toString(16).padStart(16, '0'),
    parent_span_id: null,
    conversation_synthetic: false,
    agent_id: null,
    request_id: null,
    conversation_id: fields.conversation ?? 'conv-1',
    stream_key: `${fields.conversation ?? 'conv-1'}|main`,
    run_id: 'a'.repeat(32),
    side_call: fields.sideCall ?? null,
    start_ns: String(T0_NS + BigInt(i) * 1_000_000_000n),
    end_ns: String(T0_NS + BigInt(i) * 1_000_000_000n + 250_000_000n),
    producer: 'semconv',
    provider: 'openai',
    request_model: fields.model,
    response_model: null,
    input_tokens_raw: fields.context,
    cache_read_tokens: null,
    cache_write_tokens: null,
    output_tokens: 100,
    context_tokens: fields.context,
    usage_rule: fields.context === null ? null : 'no_cache',
    context_window: fields.window,
    window_source: fields.window === null ? null : 'catalog',
    finish_reason_raw: fields.finish ?? 'stop',
    finish_class: fields.finish === 'length' ? 'output_limit' : 'stop',
    output_tool_call: false,
    output_tool_name: null,
    max_output_tokens: null,
    parts: null,
    compacted: false,
  });
  await db
    .insertInto('llm_calls')
    .values([
      ...GPT_CONTEXTS.map((context, i) =>
        call(i + 1, {
          model: 'gpt-4o',
          context,
          window: 128_000,
          ...(i === 9 ? { finish: 'length' } : {}),
        }),
      ),
      // A side call: counted in calls_daily, left out of the context percentiles.
      call(20, { model: 'gpt-4o', context: 120_000, window: 128_000, sideCall: 'title' }),
      // A model without a known window: percentiles of tokens, no usage fraction.
      call(21, { model: 'local-llm', context: 5_000, window: null, conversation: 'conv-2' }),
      // No token counts at all: a call, but in no percentile.
      call(22, { model: 'local-llm', context: null, window: null, conversation: 'conv-2' }),
    ])
    .execute();

  const finding = (
    anchor: string,
    detector: string,
    severity: 'info' | 'warning' | 'critical',
    minutes: number,
  ): Insertable<FindingsTable> => ({
    workspace_id: 'acme',
    detector,
    anchor,
    severity,
    conversation_id: 'conv-1',
    stream_key: 'conv-1|main',
    run_id: 'a'.repeat(32),
    trace_id: 'a'.repeat(32),
    span_id: '0000000000000001',
    model: 'gpt-4o',
    summary: `${detector} ${anchor}`,
    details: '{}',
    created_at: at(minutes),
    updated_at: at(minutes),
  });
  const findings = await db
    .insertInto('findings')
    .values([
      finding('f1', 'context_too_full', 'warning', 1),
      finding('f2', 'context_too_full', 'critical', 2),
      finding('f3', 'output_cut_off', 'info', 3),
    ])
    .returning('id')
    .execute();

  await db
    .insertInto('compactions')
    .values(
      [
        [100_000, 20_000],
        [90_000, 10_000],
      ].map(([before, after], i) => ({
        workspace_id: 'acme',
        source_key: `k${i}`,
        conversation_id: 'conv-1',
        stream_key: 'conv-1|main',
        run_id: 'a'.repeat(32),
        at_ns: String(T0_NS + BigInt(30 + i) * 1_000_000_000n),
        evidence: 'explicit',
        kind: 'compacted',
        trigger: 'auto',
        tokens_before: before!,
        tokens_after: after!,
        summary: 'secret summary text',
      })),
    )
    .execute();

  const channel = await db
    .insertInto('channels')
    .values({
      workspace_id: 'acme',
      type: 'webhook',
      name: 'ops',
      config: JSON.stringify({ url: 'http://127.0.0.1:9/hook' }),
      secrets: JSON.stringify({ secret: 'whsec_c2VjcmV0' }),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const delivery = (
    id: string,
    findingIndex: number,
    fields: { status: string; attempts: number; deliveredAfterS?: number },
  ) => ({
    id,
    workspace_id: 'acme',
    finding_id: findings[findingIndex]!.id,
    channel_id: channel.id,
    event: 'created',
    status: fields.status as 'pending' | 'delivered' | 'failed' | 'dead',
    attempts: fields.attempts,
    next_attempt_at: at(5),
    created_at: at(5),
    updated_at: at(5),
    delivered_at:
      fields.deliveredAfterS === undefined
        ? null
        : new Date(+at(5) + fields.deliveredAfterS * 1000),
  });
  await db
    .insertInto('deliveries')
    .values([
      delivery('msg_delivered', 0, { status: 'delivered', attempts: 1, deliveredAfterS: 2 }),
      delivery('msg_pending', 1, { status: 'pending', attempts: 2 }),
      delivery('msg_dead', 2, { status: 'dead', attempts: 5 }),
    ])
    .execute();
  return { channelId: String(channel.id) };
}

/** The read-only role SQL of docs/reporting.md, between its markers. */
export function roleSqlFromDoc(doc: string): string {
  const match =
    /<!-- reporting-role:start -->\s*```sql\n([\s\S]*?)```\s*<!-- reporting-role:end -->/.exec(doc);
  if (!match) throw new Error('docs/reporting.md has no reporting-role SQL block');
  return match[1]!;
}

/**
 * Runs the documented role SQL with role names unique to this run (roles belong to the whole
 * PostgreSQL cluster), returns the login role's name and a function that drops both roles.
 */
export async function createDocumentedRoles(
  db: Db,
  doc: string,
): Promise<{ group: string; login: string; drop: () => Promise<void> }> {
  const suffix = randomBytes(4).toString('hex');
  const group = `rotscope_reporting_${suffix}`;
  const login = `grafana_reader_${suffix}`;
  const { rows } = await sql<{ db: string }>`SELECT current_database() AS db`.execute(db);
  const script = roleSqlFromDoc(doc)
    .replaceAll('rotscope_reporting', group)
    .replaceAll('grafana_reader', login)
    .replaceAll('DATABASE rotscope ', `DATABASE "${rows[0]!.db}" `);
  await sql.raw(script).execute(db);
  return {
    group,
    login,
    async drop() {
      for (const role of [login, group]) {
        await sql.raw(`DROP OWNED BY ${role}; DROP ROLE ${role}`).execute(db);
      }
    },
  };
}

/**
 * Runs `check` with queries made as `login`: a real login to the store's database on
 * PostgreSQL, `SET ROLE` on PGlite (one connection, no logins).
 */
export async function asRole(
  store: TestStore,
  login: string,
  check: (query: (text: string) => Promise<Array<Record<string, unknown>>>) => Promise<void>,
): Promise<void> {
  if (store.url) {
    const url = new URL(store.url);
    url.username = login;
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      await check(async (text) => (await client.query<Record<string, unknown>>(text)).rows);
    } finally {
      await client.end();
    }
    return;
  }
  await store.db.connection().execute(async (conn) => {
    await sql.raw(`SET ROLE ${login}`).execute(conn);
    try {
      await check(
        async (text) => (await sql.raw<Record<string, unknown>>(text).execute(conn)).rows,
      );
    } finally {
      await sql.raw('RESET ROLE').execute(conn);
    }
  });
}
