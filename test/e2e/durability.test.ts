/**
 * A killed server loses no acknowledged span: `rotscope serve` (a real child process) is
 * killed with SIGKILL while batches are in flight, restarted on the same data, and every span
 * it answered 200 for is there. Also: SIGTERM finishes in-flight requests and exits 0.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer } from '../helpers/child-server.ts';
import { createTestDatabase, usingPostgres } from '../helpers/store.ts';
import { hex, jsonRequest, jsonSpan } from '../helpers/otlp-bodies.ts';

let env: Record<string, string>;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-durability-'));
  const url = await createTestDatabase();
  env = url ? { DATABASE_URL: url } : { ROTSCOPE_DATA_DIR: dataDir };
});
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

async function countSpans(traceIds: string[]): Promise<number> {
  if (traceIds.length === 0) return 0;
  if (usingPostgres) {
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    try {
      const result = await client.query(
        'SELECT count(*)::int AS n FROM llm_calls WHERE trace_id = ANY($1)',
        [traceIds],
      );
      return result.rows[0].n as number;
    } finally {
      await client.end();
    }
  }
  const { openStore } = await import('../../src/store/db.ts');
  const store = await openStore({ dataDir });
  try {
    const rows = await store.db
      .selectFrom('llm_calls')
      .select('trace_id')
      .where('trace_id', 'in', traceIds)
      .execute();
    return rows.length;
  } finally {
    await store.close();
  }
}

/** Waits until the server's `rotscope_ingest_inflight_requests` gauge reads `count`. */
async function untilInflight(url: string, count: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const text = await (await fetch(`${url}/metrics`)).text();
    const value = /^rotscope_ingest_inflight_requests (\d+)/m.exec(text)?.[1];
    if (Number(value) === count) return;
    if (Date.now() > deadline) throw new Error(`in flight: ${value ?? text.slice(0, 200)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('durability', () => {
  it('keeps every acknowledged span across kill -9 and restart', async () => {
    const server = await startChildServer(env);
    const acked: string[] = [];
    let stop = false;
    const sender = async () => {
      while (!stop) {
        const traceId = hex(16);
        const spans = Array.from({ length: 20 }, () => jsonSpan({ traceId }));
        try {
          const response = await fetch(`${server.url}/v1/traces`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(jsonRequest(spans)),
          });
          if (response.status === 200) acked.push(traceId);
        } catch {
          return; // the server is gone
        }
      }
    };
    const senders = [sender(), sender(), sender()];
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    server.process.kill('SIGKILL');
    await server.exited;
    stop = true;
    await Promise.all(senders);
    expect(acked.length).toBeGreaterThan(5);

    const restarted = await startChildServer(env);
    const ready = await fetch(`${restarted.url}/readyz`);
    expect(ready.status).toBe(200);
    restarted.process.kill('SIGTERM');
    expect(await restarted.exited).toBe(0);
    expect(await countSpans(acked)).toBe(acked.length * 20);
  }, 300_000);

  it('on SIGTERM finishes in-flight requests, then exits 0', async () => {
    const server = await startChildServer(env);
    const traceId = hex(16);
    const body = JSON.stringify(
      jsonRequest(Array.from({ length: 500 }, () => jsonSpan({ traceId }))),
    );
    // the request is admitted (holds an ingest slot) with half its body sent when SIGTERM comes
    const target = new URL(`${server.url}/v1/traces`);
    const request = http.request({
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    const inFlight = new Promise<{ status: number }>((resolve, reject) => {
      request.on('response', (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0 }));
      });
      request.on('error', reject);
    });
    const half = Math.floor(body.length / 2);
    request.write(body.slice(0, half));
    await untilInflight(server.url, 1);
    server.process.kill('SIGTERM');
    request.end(body.slice(half));
    const response = await inFlight;
    expect(await server.exited).toBe(0);
    if (response.status === 200) expect(await countSpans([traceId])).toBe(500);
    else expect(response.status).toBe(503); // arrived after shutdown began: refused, not half-stored
    expect(server.output()).toContain('SIGTERM: shutting down');
  }, 300_000);
});
