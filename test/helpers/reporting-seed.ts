/**
 * Known rows in the raw tables, for the reporting views' tests (test/integration/reporting-views
 * and grafana-dashboard): every value the views compute from them is stated here.
 * All rows are on SEED_DAY (UTC) in workspace `acme`.
 */
import { sql } from 'kysely';
import type { Db } from '../../src/store/db.ts';

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
  ) => ({
    workspace_id: 'acme',
    trace_id: 'a'.repeat(32),
    span_id: i.toString(16).padStart(16, '0'),
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

  const finding = (anchor: string, detector: string, severity: string, minutes: number) => ({
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
