/**
 * The reporting API (migrations/0030_reporting_v1.sql, docs/reporting.md) on a real database,
 * both backends:
 * - its columns (names, order, types) are exactly the checked-in list: a change of any view's
 *   columns fails here (v1 is frozen; additions go to the list, breaking changes to reporting_v2);
 * - every view and column is documented in docs/reporting.md;
 * - the views compute what they say from known rows (test/helpers/reporting-seed.ts);
 * - the read-only role of docs/reporting.md (its SQL, run as written) can read every view and
 *   nothing else: no raw table, no channel secret, no write.
 */
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.ts';
import {
  asRole,
  createDocumentedRoles,
  seedReporting,
  SEED_DAY,
} from '../helpers/reporting-seed.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

const EXPECTED = JSON.parse(
  readFileSync(new URL('./reporting-v1-columns.json', import.meta.url), 'utf8'),
) as Record<string, string[]>;
const DOC = readFileSync(new URL('../../docs/reporting.md', import.meta.url), 'utf8');

let store: TestStore;
let db: Db;
beforeAll(async () => {
  store = await createTestStore();
  db = store.db;
});
afterAll(async () => {
  await store?.close();
});

async function viewColumns(handle: Db): Promise<Record<string, string[]>> {
  const { rows } = await sql<{ table_name: string; column_name: string; data_type: string }>`
    SELECT c.table_name, c.column_name, c.data_type
      FROM information_schema.columns c
      JOIN information_schema.tables t
        ON t.table_schema = c.table_schema AND t.table_name = c.table_name
     WHERE c.table_schema = 'reporting_v1' AND t.table_type = 'VIEW'
     ORDER BY c.table_name, c.ordinal_position`.execute(handle);
  const columns: Record<string, string[]> = {};
  for (const row of rows)
    (columns[row.table_name] ??= []).push(`${row.column_name} ${row.data_type}`);
  return columns;
}

describe('reporting_v1: the columns are an API', () => {
  it('matches the checked-in list exactly (views, column names, order and types)', async () => {
    expect(await viewColumns(db)).toEqual(EXPECTED);
  });

  it('holds views only: no table a writer could lean on', async () => {
    const { rows } = await sql<{ table_name: string; table_type: string }>`
      SELECT table_name, table_type FROM information_schema.tables
       WHERE table_schema = 'reporting_v1' AND table_type <> 'VIEW'`.execute(db);
    expect(rows).toEqual([]);
  });

  it('documents every view and every column in docs/reporting.md', () => {
    for (const [view, columns] of Object.entries(EXPECTED)) {
      const section = new RegExp(
        `### \`reporting_v1\\.${view}\`\\n([\\s\\S]*?)(?=\\n### |\\n## |$)`,
      ).exec(DOC);
      expect(section, `section for reporting_v1.${view}`).not.toBeNull();
      for (const column of columns) {
        const name = column.split(' ')[0]!;
        expect(section![1], `reporting_v1.${view}.${name} documented`).toContain(`\`${name}\``);
      }
    }
  });
});

describe('reporting_v1: what the views compute', () => {
  beforeAll(async () => {
    await seedReporting(db);
  });

  const rows = async <T>(query: ReturnType<typeof sql<T>>) => (await query.execute(db)).rows;

  it('calls_daily: calls, side calls, conversations and token sums per day, model and producer', async () => {
    const got = await rows(sql<Record<string, unknown>>`
      SELECT day::text, model, producer, calls, side_calls, conversations, input_tokens,
             output_tokens, output_limit_calls
        FROM reporting_v1.calls_daily WHERE workspace_id = 'acme' ORDER BY model`);
    expect(got).toEqual([
      {
        day: SEED_DAY,
        model: 'gpt-4o',
        producer: 'semconv',
        calls: '11',
        side_calls: '1',
        conversations: '1',
        input_tokens: String(550_000 + 120_000),
        output_tokens: '1100',
        output_limit_calls: '1',
      },
      {
        day: SEED_DAY,
        model: 'local-llm',
        producer: 'semconv',
        calls: '2',
        side_calls: '0',
        conversations: '1',
        input_tokens: '5000',
        output_tokens: '200',
        output_limit_calls: '0',
      },
    ]);
  });

  it('context_usage_daily: percentiles of tokens and of the window, side calls left out', async () => {
    const got = await rows(sql<Record<string, unknown>>`
      SELECT model, calls, context_window, context_tokens_p50, context_tokens_p90,
             context_tokens_max, usage_p50, usage_max
        FROM reporting_v1.context_usage_daily
       WHERE workspace_id = 'acme' AND day = ${SEED_DAY}::date ORDER BY model`);
    expect(got).toEqual([
      {
        model: 'gpt-4o',
        calls: '10',
        context_window: '128000',
        context_tokens_p50: 55_000,
        context_tokens_p90: 91_000,
        context_tokens_max: '100000',
        usage_p50: 55_000 / 128_000,
        usage_max: 100_000 / 128_000,
      },
      {
        model: 'local-llm',
        calls: '1',
        context_window: null,
        context_tokens_p50: 5000,
        context_tokens_p90: 5000,
        context_tokens_max: '5000',
        usage_p50: null,
        usage_max: null,
      },
    ]);
  });

  it('calls: one row per call with its usage fraction and UTC day', async () => {
    const got = await rows(sql<{ n: string; usage: number; day: string; started: string }>`
      SELECT count(*)::text AS n, max(context_usage) AS usage, min(day)::text AS day,
             to_char(min(started_at) AT TIME ZONE 'UTC', 'HH24:MI:SS') AS started
        FROM reporting_v1.calls WHERE workspace_id = 'acme'`);
    expect(got).toEqual([
      { n: '13', usage: 120_000 / 128_000, day: SEED_DAY, started: '10:00:01' },
    ]);
  });

  it('findings and findings_daily: per detector and severity', async () => {
    const got = await rows(sql<Record<string, unknown>>`
      SELECT day::text, detector, severity, findings, conversations
        FROM reporting_v1.findings_daily WHERE workspace_id = 'acme'
       ORDER BY detector, severity`);
    expect(got).toEqual([
      {
        day: SEED_DAY,
        detector: 'context_too_full',
        severity: 'critical',
        findings: '1',
        conversations: '1',
      },
      {
        day: SEED_DAY,
        detector: 'context_too_full',
        severity: 'warning',
        findings: '1',
        conversations: '1',
      },
      {
        day: SEED_DAY,
        detector: 'output_cut_off',
        severity: 'info',
        findings: '1',
        conversations: '1',
      },
    ]);
    const all = await rows(sql<{ n: string }>`
      SELECT count(*)::text AS n FROM reporting_v1.findings WHERE workspace_id = 'acme'`);
    expect(all).toEqual([{ n: '3' }]);
  });

  it('compactions and compactions_daily: tokens freed, no summary text', async () => {
    const got = await rows(sql<Record<string, unknown>>`
      SELECT day::text, kind, compactions, conversations, tokens_before_p50, tokens_freed
        FROM reporting_v1.compactions_daily WHERE workspace_id = 'acme'`);
    expect(got).toEqual([
      {
        day: SEED_DAY,
        kind: 'compacted',
        compactions: '2',
        conversations: '1',
        tokens_before_p50: 95_000,
        tokens_freed: String(80_000 + 80_000),
      },
    ]);
    const text = await rows(sql<{ row: string }>`
      SELECT row_to_json(k)::text AS row FROM reporting_v1.compactions k`);
    expect(text.map((r) => r.row).join('\n')).not.toContain('secret summary text');
  });

  it('deliveries, delivery_health_daily and delivery_backlog: status, retries, time to deliver', async () => {
    const health = await rows(sql<Record<string, unknown>>`
      SELECT day::text, channel_type, channel_name, deliveries, delivered, pending, failed, dead,
             attempts, retried, delivery_seconds_p50, delivery_seconds_max
        FROM reporting_v1.delivery_health_daily WHERE workspace_id = 'acme'`);
    expect(health).toEqual([
      {
        day: SEED_DAY,
        channel_type: 'webhook',
        channel_name: 'ops',
        deliveries: '3',
        delivered: '1',
        pending: '1',
        failed: '0',
        dead: '1',
        attempts: '8',
        retried: '2',
        delivery_seconds_p50: 2,
        delivery_seconds_max: 2,
      },
    ]);
    const backlog = await rows(sql<Record<string, unknown>>`
      SELECT channel_name, pending, due, retrying, oldest_age_seconds > 0 AS aged
        FROM reporting_v1.delivery_backlog WHERE workspace_id = 'acme'`);
    expect(backlog).toEqual([
      { channel_name: 'ops', pending: '1', due: '1', retrying: '1', aged: true },
    ]);
    const text = await rows(sql<{ row: string }>`
      SELECT row_to_json(d)::text AS row FROM reporting_v1.deliveries d`);
    expect(text).toHaveLength(3);
    expect(text.map((r) => r.row).join('\n')).not.toMatch(/whsec_|127\.0\.0\.1:9/);
  });
});

describe('reporting_v1: the documented read-only role', () => {
  let roles: Awaited<ReturnType<typeof createDocumentedRoles>>;
  beforeAll(async () => {
    roles = await createDocumentedRoles(db, DOC);
  });
  afterAll(async () => {
    await roles?.drop();
  });

  it('reads every view', async () => {
    await asRole(store, roles.login, async (query) => {
      for (const view of Object.keys(EXPECTED)) {
        await expect(query(`SELECT * FROM reporting_v1.${view} LIMIT 1`)).resolves.toBeDefined();
      }
    });
  });

  it('reads no raw table (no channel secret), and writes nothing', async () => {
    await asRole(store, roles.login, async (query) => {
      for (const table of ['channels', 'findings', 'llm_calls', 'api_tokens', 'spans']) {
        await expect(query(`SELECT 1 FROM public.${table} LIMIT 1`)).rejects.toMatchObject({
          code: '42501',
        });
      }
      // workspaces is a simple (auto-updatable) view: only SELECT is granted.
      // 25006 (read-only transaction, the login's default) or 42501 (no INSERT privilege).
      const refused = await query(
        `INSERT INTO reporting_v1.workspaces (workspace_id) VALUES ('x')`,
      ).then(
        () => 'inserted',
        (error: { code?: string }) => error.code,
      );
      expect(['25006', '42501']).toContain(refused);
    });
  });
});
