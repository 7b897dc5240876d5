/**
 * `npm run bench -- import-memory`: the memory bound of `POST /api/import` (issue 33). Four
 * concurrent imports of a ~104 MiB Claude Code transcript (the real sidechains transcript of
 * test/fixtures repeated with fresh ids, so every copy is a conversation of its own) sent at once
 * to a fresh `rotscope serve` child; its peak RSS (VmHWM) and what each import was answered.
 * Embedded PGlite by default (in the server's process, so counted in its RSS); DATABASE_URL runs
 * it on a fresh database of that PostgreSQL instead. BENCH_IMPORT_MIB sets the body size (default
 * 104), BENCH_IMPORT_CONCURRENT the number of imports (default 4).
 */
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { importRequestBody } from '../src/cli/import.ts';
import { startServerProcess } from './server-process.ts';

const TRANSCRIPT = fileURLToPath(
  new URL('../test/fixtures/real/claude-code_transcript_sidechains.jsonl', import.meta.url),
);
const MiB = 1024 * 1024;
const UUID = /[0-9a-f]{8}(-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/g;
const PROVIDER_ID = /"((?:msg|req|toolu)_[A-Za-z0-9]+)"/g;

/** Copy `k` of the transcript: every UUID (sessions, entries) and provider id made its own. */
function copyOf(text: string, k: number): string {
  const tag = k.toString(16).padStart(8, '0');
  return text.replace(UUID, `${tag}$1`).replace(PROVIDER_ID, `"$1_${tag}"`);
}

/** A POST /api/import body (as the command sends it) of at least `bytes`, of copies `first`, ... */
function importBody(text: string, bytes: number, first: number): { body: Buffer; copies: number } {
  const parts: string[] = [];
  let size = 0;
  for (let k = first; size < bytes; k++) {
    const part = copyOf(text, k);
    parts.push(part);
    size += Buffer.byteLength(JSON.stringify(part)) - 2;
  }
  const body = Buffer.from(
    importRequestBody({
      workspace: undefined,
      path: `/bench/import-${first}.jsonl`,
      text: parts.join(''),
      historyBefore: `${Date.now()}000000`,
    }),
  );
  return { body, copies: parts.length };
}

/** POSTs `body`; resolves with the answer, also when it comes before the body was all sent. */
function post(url: string, body: Buffer): Promise<{ status: number; text: string }> {
  const target = new URL(`${url}/api/import`);
  return new Promise((resolve) => {
    let answered = false;
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
      },
      (response) => {
        answered = true;
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        response.on('error', () => resolve({ status: response.statusCode ?? 0, text }));
      },
    );
    request.on('error', (error) => {
      if (!answered) resolve({ status: 0, text: String(error) });
    });
    request.end(body);
  });
}

/** A fresh database on DATABASE_URL's server, dropped by `drop`. */
async function freshDatabase(base: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `rotscope_import_memory_${process.pid}_${Date.now()}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    await client.query(sql);
    await client.end();
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** RSS and its high-water mark of a process, in MiB (Linux /proc). */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

export async function benchImportMemory(): Promise<Record<string, unknown>> {
  const mib = Number(process.env.BENCH_IMPORT_MIB ?? 104);
  const concurrent = Number(process.env.BENCH_IMPORT_CONCURRENT ?? 4);
  const text = readFileSync(TRANSCRIPT, 'utf8');
  const bodies: Buffer[] = [];
  let copies = 0;
  for (let i = 0; i < concurrent; i++) {
    const made = importBody(text, mib * MiB, i * 1000);
    bodies.push(made.body);
    copies = made.copies;
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'rotscope-bench-import-'));
  const database = process.env.DATABASE_URL
    ? await freshDatabase(process.env.DATABASE_URL)
    : undefined;
  // PGlite: the data directory is made and migrated by a first start, as a user's server has it
  // from its second start on (initdb and the migrations leave ~900 MiB resident in the process
  // that ran them); BENCH_IMPORT_FRESH=1 measures that first start instead.
  if (!database && process.env.BENCH_IMPORT_FRESH !== '1')
    await (await startServerProcess({ ROTSCOPE_DATA_DIR: dataDir })).stop();
  const server = await startServerProcess({
    ...(database ? { DATABASE_URL: database.url } : { ROTSCOPE_DATA_DIR: dataDir }),
    ROTSCOPE_RETENTION_DAYS: '0',
    ROTSCOPE_LOG_LEVEL: 'warn',
  });
  try {
    const pid = server.process.pid!;
    const before = memoryOf(pid);
    const started = performance.now();
    const answers = await Promise.all(
      bodies.map(async (body) => {
        const t0 = performance.now();
        const answer = await post(server.url, body);
        return {
          status: answer.status,
          seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
          ...(answer.status === 200
            ? { calls: (JSON.parse(answer.text) as { calls: number }).calls }
            : { message: answer.text.slice(0, 200) }),
        };
      }),
    );
    const after = memoryOf(pid);
    return {
      database: database ? 'postgresql' : 'pglite',
      bodyMiB: Number((bodies[0]!.length / MiB).toFixed(1)),
      copiesPerBody: copies,
      concurrent,
      seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
      rssBeforeMiB: Math.round(before.rss),
      peakRssMiB: Math.round(after.hwm),
      answers,
      serverAlive: server.process.exitCode === null,
    };
  } finally {
    await server.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
