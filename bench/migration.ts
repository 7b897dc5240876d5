/**
 * Migration 0110 (issue 22) on a database of BENCH_MIGRATION_CALLS (default 1,000,000) calls:
 * a database migrated up to 0100 gets that many `llm_calls` rows over ten daily partitions, each
 * with its raw `spans` row as rotscope stored them before (the LLM span with ~1 KB of input
 * messages and system instructions, plus a few other attributes), then the migration runs and is
 * timed. Reports the time, the rows it filled, and the time of a plain `SELECT count(*)` over the
 * spans as the baseline of the same run (a full read of what the migration must read).
 * PostgreSQL only (DATABASE_URL).
 */
import pg from 'pg';
import { openStore } from '../src/store/db.ts';
import { loadMigrations, migrate } from '../src/store/migrate.ts';
import { createTestDatabase } from '../test/helpers/store.ts';

const DAY_NS = 86_400_000_000_000n;

export async function benchMigration() {
  if (!process.env.DATABASE_URL) return { skipped: 'needs DATABASE_URL' };
  const calls = Number(process.env.BENCH_MIGRATION_CALLS ?? 1_000_000);
  const days = 10;
  const url = (await createTestDatabase())!;
  const store = await openStore({ databaseUrl: url, dataDir: 'memory://' });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const all = loadMigrations();
    await migrate(
      store.db,
      all.filter((m) => m.version < 110),
    );
    await client.query(`INSERT INTO workspaces (id) VALUES ('default') ON CONFLICT DO NOTHING`);
    const firstDay = (BigInt(Date.now()) * 1_000_000n) / DAY_NS - BigInt(days);
    const fillStarted = performance.now();
    for (let d = 0; d < days; d++) {
      const day = new Date(Number(((firstDay + BigInt(d)) * DAY_NS) / 1_000_000n));
      const date = day.toISOString().slice(0, 10);
      for (const table of ['spans', 'llm_calls'])
        await client.query(`SELECT rotscope_ensure_partition($1, $2::date)`, [table, date]);
      const start = ((firstDay + BigInt(d)) * DAY_NS).toString();
      const n = Math.floor(calls / days);
      const base = d * n;
      // the span: its messages (~1 KB) and what a semconv chat span carries besides
      await client.query(
        `INSERT INTO spans (workspace_id, trace_id, span_id, name, kind, start_ns, end_ns, attributes, role)
         SELECT 'default', md5(g::text), lpad(to_hex(g), 16, '0'), 'chat gpt-4o', 3,
                $1::bigint + g * 1000, $1::bigint + g * 1000 + 500,
                jsonb_build_object(
                  'gen_ai.operation.name', 'chat',
                  'gen_ai.request.model', 'gpt-4o',
                  'gen_ai.conversation.id', 'conv-' || (g / 10),
                  'gen_ai.usage.input_tokens', 1000 + g % 5000,
                  'gen_ai.usage.output_tokens', 80,
                  'gen_ai.system_instructions', 'You are a careful coding agent. ' || repeat('Be brief. ', 20),
                  'gen_ai.input.messages',
                    '[{"role":"user","parts":[{"type":"text","content":"' || repeat('lorem ipsum ', 60) || g || '"}]}]'),
                'llm_call'
           FROM generate_series($2::int + 1, $2::int + $3::int) AS g`,
        [start, base, n],
      );
      await client.query(
        `INSERT INTO llm_calls (workspace_id, trace_id, span_id, conversation_id, conversation_synthetic,
                                stream_key, run_id, start_ns, end_ns, producer, request_model,
                                input_tokens_raw, output_tokens, context_tokens, compacted)
         SELECT 'default', md5(g::text), lpad(to_hex(g), 16, '0'), 'conv-' || (g / 10), false,
                'conv-' || (g / 10), md5(g::text), $1::bigint + g * 1000, $1::bigint + g * 1000 + 500,
                'semconv', 'gpt-4o', 1000 + g % 5000, 80, 1000 + g % 5000, false
           FROM generate_series($2::int + 1, $2::int + $3::int) AS g`,
        [start, base, n],
      );
    }
    await client.query('VACUUM ANALYZE');
    await client.query('CHECKPOINT');
    const fillSeconds = (performance.now() - fillStarted) / 1000;

    const scanStarted = performance.now();
    await client.query(`SELECT count(*) FROM spans WHERE attributes ? 'gen_ai.input.messages'`);
    const scanSeconds = (performance.now() - scanStarted) / 1000;

    const started = performance.now();
    await migrate(store.db, all);
    const migrationSeconds = (performance.now() - started) / 1000;
    const filled = await client.query(
      `SELECT count(*)::int AS n FROM llm_calls WHERE input_messages IS NOT NULL`,
    );
    const size = await client.query(
      `SELECT pg_size_pretty(sum(pg_total_relation_size(inhrelid))) AS spans
         FROM pg_inherits WHERE inhparent = 'spans'::regclass`,
    );
    return {
      calls: Math.floor(calls / days) * days,
      spansSize: (size.rows[0] as { spans: string }).spans,
      fillSeconds: Number(fillSeconds.toFixed(1)),
      migrationSeconds: Number(migrationSeconds.toFixed(1)),
      callsFilled: (filled.rows[0] as { n: number }).n,
      scanSeconds: Number(scanSeconds.toFixed(1)),
      ratioToScan: Number((migrationSeconds / scanSeconds).toFixed(1)),
    };
  } finally {
    await client.end().catch(() => {});
    await store.close();
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
    await admin.end();
  }
}
