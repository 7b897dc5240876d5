/** Retention drops old daily partitions, deletes old rows of the default partitions, keeps newer rows and every finding. */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePartitions, listPartitions, utcDay } from '../../src/store/partitions.ts';
import { pruneOlderThan } from '../../src/store/retention.ts';
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

describe('pruneOlderThan', () => {
  it('drops partitions older than the window, deletes old default rows, keeps the rest', async () => {
    const old = Date.now() - 40 * DAY_MS;
    const recent = Date.now() - 2 * DAY_MS;
    await ensurePartitions(store.db, old);
    await ensurePartitions(store.db, recent);
    const iso = (ms: number) => new Date(ms).toISOString();
    await store.db
      .insertInto('spans')
      .values([
        span('0000000000000001', old, iso(old)), // its day's partition is dropped
        span('0000000000000002', recent, iso(recent)),
        span('0000000000000003', 1, iso(old)), // 1970: default partition, arrived long ago
        span('0000000000000004', 1, iso(recent)), // default partition, arrived lately
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
    expect(deleted.spans).toBe(2);
    const left = await store.db.selectFrom('spans').select('span_id').orderBy('span_id').execute();
    expect(left.map((r) => r.span_id)).toEqual(['0000000000000002', '0000000000000004']);
    const names = (await listPartitions(store.db)).map((p) => p.name);
    for (const table of ['spans', 'llm_calls', 'tool_results', 'log_records']) {
      expect(names).not.toContain(`${table}_p${utcDay(old).replaceAll('-', '')}`);
      expect(names).toContain(`${table}_p${utcDay(recent).replaceAll('-', '')}`);
    }
    const findings = await sql<{ n: string }>`SELECT count(*) AS n FROM findings`.execute(store.db);
    expect(Number(findings.rows[0]!.n)).toBe(1);
  });
});
