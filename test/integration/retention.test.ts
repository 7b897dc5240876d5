/**
 * Retention drops old daily partitions, deletes the default partitions' rows older than the
 * window by their own time (rows dated beyond the partitions ahead by their arrival), ages the
 * compactions the same way, keeps newer rows and every finding: an imported session is pruned
 * whole or kept whole, never its tool results without its calls.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePartitions, listPartitions, utcDay } from '../../src/store/partitions.ts';
import { pruneOlderThan } from '../../src/store/retention.ts';
import { compactionRow, llmCallRow } from '../../src/store/timeline.ts';
import { call, compaction } from '../helpers/calls.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

const DAY_MS = 86_400_000;

let store: TestStore;
beforeAll(async () => {
  store = await createTestStore();
});
afterAll(async () => {
  await store?.close();
});

const span = (spanId: string, startMs: number, receivedAt: string) => ({
  workspace_id: 'default',
  trace_id: 'a'.repeat(32),
  span_id: spanId,
  name: 'chat',
  kind: 3,
  start_ns: (BigInt(startMs) * 1_000_000n).toString(),
  end_ns: (BigInt(startMs) * 1_000_000n).toString(),
  status_code: 0,
  status_message: '',
  scope_name: '',
  scope_version: '',
  attributes: '{}',
  events: '[]',
  links: '[]',
  resource: '{}',
  role: 'llm_call',
  received_at: receivedAt,
});

const nsOf = (ms: number) => (BigInt(ms) * 1_000_000n).toString();

describe('pruneOlderThan', () => {
  it('drops partitions older than the window, deletes old default rows, keeps the rest', async () => {
    const old = Date.now() - 40 * DAY_MS;
    const recent = Date.now() - 2 * DAY_MS;
    const ahead = Date.now() + 400 * DAY_MS;
    await ensurePartitions(store.db, old);
    await ensurePartitions(store.db, recent);
    const iso = (ms: number) => new Date(ms).toISOString();
    await store.db
      .insertInto('spans')
      .values([
        span('0000000000000001', old, iso(old)), // its day's partition is dropped
        span('0000000000000002', recent, iso(recent)),
        span('0000000000000003', 1, iso(old)), // 1970: default partition, arrived long ago
        span('0000000000000004', 1, iso(recent)), // 1970, arrived lately (an import): its own time
        span('0000000000000005', ahead, iso(old)), // dated far ahead (a wrong clock), long ago
        span('0000000000000006', ahead, iso(recent)), // dated far ahead, arrived lately
      ])
      .execute();
    await store.db
      .insertInto('findings')
      .values({
        workspace_id: 'default',
        detector: 'output_cut_off',
        anchor: 'x',
        severity: 'warning',
        conversation_id: 'c',
        stream_key: 'c|main',
        run_id: 'r',
        trace_id: 'a'.repeat(32),
        span_id: '0000000000000001',
        summary: 's',
        details: '{}',
        created_at: iso(old),
      })
      .execute();
    const deleted = await pruneOlderThan(store.db, 30);
    expect(deleted.spans).toBe(4);
    const left = await store.db.selectFrom('spans').select('span_id').orderBy('span_id').execute();
    expect(left.map((r) => r.span_id)).toEqual(['0000000000000002', '0000000000000006']);
    const names = (await listPartitions(store.db)).map((p) => p.name);
    for (const table of ['spans', 'llm_calls', 'tool_results', 'log_records']) {
      expect(names).not.toContain(`${table}_p${utcDay(old).replaceAll('-', '')}`);
      expect(names).toContain(`${table}_p${utcDay(recent).replaceAll('-', '')}`);
    }
    const findings = await sql<{ n: string }>`SELECT count(*) AS n FROM findings`.execute(store.db);
    expect(Number(findings.rows[0]!.n)).toBe(1);
  });

  it('prunes an imported session whole: its calls, tool results and compactions go together', async () => {
    // a June transcript imported now: days without partitions, rows in the default partitions
    const june = Date.UTC(2025, 5, 10, 12);
    const lastWeek = Date.now() - 7 * DAY_MS;
    await ensurePartitions(store.db, lastWeek);
    for (const [conversation, at] of [
      ['june-session', june],
      ['last-week-session', lastWeek],
    ] as const) {
      await store.db
        .insertInto('llm_calls')
        .values(
          [0, 1].map((i) =>
            llmCallRow(
              call(conversation, 0, {
                spanId: `${conversation}-${i}`,
                startNs: nsOf(at + i * 1000),
                endNs: nsOf(at + i * 1000 + 500),
                producer: 'claude_code_transcript',
              }),
            ),
          ),
        )
        .execute();
      await store.db
        .insertInto('tool_results')
        .values({
          workspace_id: 'default',
          trace_id: `trace-${conversation}`,
          span_id: `${conversation}-r`,
          conversation_id: conversation,
          stream_key: conversation,
          tool_name: 'Read',
          tool_call_id: 'toolu_1',
          result_size: 9000,
          size_unit: 'chars',
          at_ns: nsOf(at + 700),
          source: 'claude_code_transcript',
        })
        .execute();
      await store.db
        .insertInto('compactions')
        .values(
          compactionRow({
            ...compaction(conversation, 0),
            atNs: nsOf(at + 800),
            sourceKey: `transcript:${conversation}`,
          }),
        )
        .execute();
    }
    await pruneOlderThan(store.db, 30);
    const left = async (table: 'llm_calls' | 'tool_results' | 'compactions') =>
      (
        await store.db
          .selectFrom(table)
          .select('conversation_id')
          .where('conversation_id', 'in', ['june-session', 'last-week-session'])
          .execute()
      ).map((r) => r.conversation_id);
    expect(await left('llm_calls')).toEqual(['last-week-session', 'last-week-session']);
    expect(await left('tool_results')).toEqual(['last-week-session']);
    expect(await left('compactions')).toEqual(['last-week-session']);
  });
});
