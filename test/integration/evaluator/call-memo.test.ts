/**
 * Judging new calls from memory (src/store/call-memo.ts, issue 39) over every producer's real
 * captures (test/fixtures/real): each captured OTLP body (and each whole export of spans in one
 * file: Copilot's, the instrumentation libraries') is sent in the order the producer sent it, to
 * two servers at once, one judging from memory and one reading every call back, and each
 * waits until its evaluator has judged what arrived before the next body goes (an agent's turns
 * come seconds apart). Every evaluation from memory is compared with the stored rows
 * (`verifyCallMemo`); the two servers must store the same findings.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postOtlp } from '../../helpers/capture-replay.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const REAL = fileURLToPath(new URL('../../fixtures/real/', import.meta.url));
/** A numbered body of a capture; or a whole export of spans in one file (Copilot's, the libraries'). */
const BODY = /^(\d+)-(traces|logs)\.(json|pb)(\.br|\.gz)?$/;
const WHOLE = /^(traces\.json\.gz|otlp-json_.*\.json)$/;

/** Every captured body under `dir`, by capture (a folder; `otlp/` and `hook/` are one capture). */
function captures(dir: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (BODY.test(name) || WHOLE.test(name)) {
        const folder = dirname(path);
        const capture = ['otlp', 'hook'].includes(basename(folder)) ? dirname(folder) : folder;
        out.set(capture, [...(out.get(capture) ?? []), path]);
      }
    }
  };
  walk(dir);
  const order = (file: string) => Number(BODY.exec(basename(file))?.[1] ?? 0);
  for (const files of out.values())
    files.sort((a, b) => order(a) - order(b) || basename(a).localeCompare(basename(b)));
  return out;
}

/** The OTLP request bodies of a file (a whole export may hold several, as a JSON array). */
function bodiesOf(
  path: string,
): Array<{ signal: 'traces' | 'logs'; body: string | Buffer; protobuf: boolean }> {
  const name = basename(path);
  let bytes = readFileSync(path);
  if (name.endsWith('.br')) bytes = brotliDecompressSync(bytes);
  if (name.endsWith('.gz')) bytes = gunzipSync(bytes);
  const numbered = BODY.exec(name);
  if (numbered?.[3] === 'pb')
    return [{ signal: numbered[2] as 'logs', body: bytes, protobuf: true }];
  const signal = (numbered?.[2] ?? 'traces') as 'traces' | 'logs';
  const json: unknown = JSON.parse(bytes.toString('utf8'));
  return (Array.isArray(json) ? json : [json]).map((request) => ({
    signal,
    body: JSON.stringify(request),
    protobuf: false,
  }));
}

/** Waits until the server's evaluator has judged everything that arrived (at most 10 s). */
async function judged(server: TestServer): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { rows } = await sql<{
      n: string;
    }>`SELECT count(*) AS n FROM conversations WHERE dirty`.execute(server.store.db);
    if (Number(rows[0]!.n) === 0) return;
    if (Date.now() > deadline) throw new Error(`${server.url}: conversations still dirty`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function findingsOf(server: TestServer) {
  const { rows } = await sql`SELECT conversation_id, detector, anchor, severity, trace_id, span_id,
      details, late FROM findings ORDER BY conversation_id, detector, anchor`.execute(
    server.store.db,
  );
  return rows;
}

const config = { evaluatorQuietMs: 20, evaluatorPollMs: 10, splitEvidenceSettleMs: 0 };
let fromMemory: TestServer;
let readBack: TestServer;

beforeAll(async () => {
  [fromMemory, readBack] = await Promise.all([
    startTestServer({ config }),
    startTestServer({ config, callMemo: false }),
  ]);
});

afterAll(async () => {
  await Promise.all([fromMemory?.close(), readBack?.close()]);
});

describe('new calls judged from memory', () => {
  it('are the stored rows, for every producer, and find what reading them back finds', async () => {
    const all = captures(REAL);
    expect(all.size).toBeGreaterThan(20);
    for (const [capture, files] of all) {
      for (const file of files)
        for (const { signal, body, protobuf } of bodiesOf(file)) {
          const what = `${capture.slice(REAL.length)} ${basename(file)}`;
          await Promise.all(
            [fromMemory, readBack].map((server) =>
              postOtlp(server.url, signal, body, { protobuf, what }),
            ),
          );
          await Promise.all([judged(fromMemory), judged(readBack)]);
        }
    }
    const stats = fromMemory.callMemo!.stats;
    expect(stats.differed).toBe(0);
    // the memory stood in for reading back, often, and each time it was checked
    expect(stats.used).toBeGreaterThan(30);
    expect(stats.verified).toBe(stats.used);
    expect(readBack.callMemo).toBeUndefined();
    const found = await findingsOf(fromMemory);
    expect(found.length).toBeGreaterThan(10);
    expect(found).toEqual(await findingsOf(readBack));
  }, 180_000);
});
