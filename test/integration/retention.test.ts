/** Retention deletes raw data older than the window, keeps newer rows and every finding. */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneOlderThan } from '../../src/store/retention.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

let store: TestStore;
beforeAll(async () => {
  store = await createTestStore();
});
afterAll(async () => {
  await store?.close();
});

const span = (spanId: string, receivedAt: string) => ({
  workspace_id: 'default',
  trace_id: 'a'.repeat(32),
  span_id: spanId,
  name: 'chat',
  kind: 3,
  start_ns: '1',
  end_ns: '2',
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
  it('deletes rows older than the window and keeps the rest', async () => {
    const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
    const recent = new Date(Date.now() - 2 * 86_400_000).toISOString();
    await store.db
      .insertInto('spans')
      .values([span('0000000000000001', old), span('0000000000000002', recent)])
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
        created_at: old,
      })
      .execute();
    const deleted = await pruneOlderThan(store.db, 30);
    expect(deleted.spans).toBe(1);
    const left = await store.db.selectFrom('spans').select('span_id').execute();
    expect(left.map((r) => r.span_id)).toEqual(['0000000000000002']);
    const findings = await sql<{ n: string }>`SELECT count(*) AS n FROM findings`.execute(store.db);
    expect(Number(findings.rows[0]!.n)).toBe(1);
  });
});
