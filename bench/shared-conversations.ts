/**
 * Ordinary concurrent ingest over shared conversations (issue 33): a real `rotscope serve` on
 * PostgreSQL (DATABASE_URL; a fresh database) with its defaults, 16 senders posting 1,200
 * protobuf batches of 50 chat spans whose conversations are drawn from 97 shared ones, each
 * sender retrying 429/502/503/504 after `Retry-After` as OTLP exporters do. Reports every
 * answer by status, the answers of 429/503 that lacked `Retry-After`, the share of batches
 * acknowledged within 200 s, each batch's time to its 200 (p50/p99, retries included), the
 * deadlocks PostgreSQL counted in the database, and whether every acknowledged span is stored.
 * BENCH_SHARED_BATCHES and BENCH_SHARED_SENDERS resize the load.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase } from '../test/helpers/store.ts';
import { encodeBatch, type BenchSpan } from './genai-spans.ts';
import { percentile } from './ingest.ts';
import { startServerProcess } from './server-process.ts';

const BATCHES = Number(process.env.BENCH_SHARED_BATCHES ?? 1_200);
const SENDERS = Number(process.env.BENCH_SHARED_SENDERS ?? 16);
const SPANS = 50;
const CONVERSATIONS = 97;
const RETRIED = new Set([429, 502, 503, 504]);

const text = (key: string, value: string) => ({ key, value: { stringValue: value } });
const int = (key: string, value: number) => ({ key, value: { intValue: value } });

/** One batch: 50 chat calls in conversations drawn at random from the shared ones. */
function batch(b: number, baseNs: bigint): { body: Buffer; traceIds: string[] } {
  const spans: BenchSpan[] = [];
  for (let i = 0; i < SPANS; i++) {
    const n = b * SPANS + i;
    const start = baseNs + BigInt(n) * 1_000_000n;
    spans.push({
      traceId: randomBytes(16),
      spanId: randomBytes(8),
      name: 'chat gpt-4.1',
      kind: 3,
      startTimeUnixNano: start.toString(),
      endTimeUnixNano: (start + 500_000n).toString(),
      attributes: [
        text('gen_ai.operation.name', 'chat'),
        text('gen_ai.provider.name', 'openai'),
        text('gen_ai.request.model', 'gpt-4.1'),
        text('gen_ai.conversation.id', `shared-${Math.floor(Math.random() * CONVERSATIONS)}`),
        int('gen_ai.usage.input_tokens', 3_000 + (n % 40) * 1_000),
        int('gen_ai.usage.output_tokens', 180),
      ] as BenchSpan['attributes'],
    });
  }
  return { body: encodeBatch(spans), traceIds: spans.map((s) => s.traceId.toString('hex')) };
}

export async function benchSharedConversations() {
  const databaseUrl = await createTestDatabase();
  if (!databaseUrl) throw new Error('shared-conversations needs DATABASE_URL (PostgreSQL)');
  const server = await startServerProcess({ DATABASE_URL: databaseUrl });
  const baseNs = BigInt(Date.now()) * 1_000_000n;
  const batches = Array.from({ length: BATCHES }, (_, b) => batch(b, baseNs));
  const statuses: Record<number, number> = {};
  let withoutRetryAfter = 0;
  const ackMs: number[] = [];
  const acked: string[] = [];
  let next = 0;
  const started = performance.now();
  try {
    await Promise.all(
      Array.from({ length: SENDERS }, async () => {
        while (next < batches.length) {
          const { body, traceIds } = batches[next++]!;
          const sent = performance.now();
          for (;;) {
            const response = await fetch(`${server.url}/v1/traces`, {
              method: 'POST',
              headers: { 'content-type': 'application/x-protobuf' },
              body,
            });
            await response.arrayBuffer();
            statuses[response.status] = (statuses[response.status] ?? 0) + 1;
            const retryAfter = Number(response.headers.get('retry-after'));
            if ((response.status === 429 || response.status === 503) && !retryAfter)
              withoutRetryAfter++;
            if (response.status === 200) {
              ackMs.push(performance.now() - sent);
              acked.push(...traceIds);
              break;
            }
            if (!RETRIED.has(response.status)) break; // an exporter drops the batch
            await new Promise((resolve) => setTimeout(resolve, (retryAfter || 1) * 1000));
          }
        }
      }),
    );
  } finally {
    await server.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const stored = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM llm_calls WHERE trace_id = ANY($1)',
      [acked],
    );
    const deadlocks = await client.query<{ n: string }>(
      'SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()',
    );
    return {
      batches: BATCHES,
      senders: SENDERS,
      seconds: Number(seconds.toFixed(1)),
      statuses,
      withoutRetryAfter,
      ackedWithin200s: Number((ackMs.filter((ms) => ms <= 200_000).length / BATCHES).toFixed(4)),
      ackP50Ms: percentile(ackMs, 0.5),
      ackP99Ms: percentile(ackMs, 0.99),
      deadlocks: Number(deadlocks.rows[0]!.n),
      everyAckedSpanStored: stored.rows[0]!.n === acked.length,
    };
  } finally {
    await client.end();
  }
}
