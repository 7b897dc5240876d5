/**
 * `npm run bench -- soak [--minutes N] [--overload-minutes N] [--recovery-minutes N]`: memory
 * and latency over time (issue 10, item 2). A real `rotscope serve` child process on
 * PostgreSQL (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres; a fresh
 * database per run), with the evaluator and notifier on and one webhook channel on a loopback
 * sink receiving every finding. Phases, each sampled every few seconds (the child's RSS from
 * /proc, p99 latency of the requests answered in the window, statuses):
 *
 * 1. saturation: 8 closed-loop senders of ~512-span protobuf batches with content, 20 s;
 * 2. steady: open loop at half that rate for `--minutes` (default 20): RSS and p99 slopes;
 * 3. overload: open loop at twice the saturation rate for `--overload-minutes` (default 2):
 *    429s instead of growth, peak RSS against the stated bound;
 * 4. recovery: half the rate again for `--recovery-minutes` (default 1).
 *
 * Writes bench/out/soak-<time>.json and .svg (RSS and p99 curves). `npm run bench -- gzip32`
 * (benchGzip32 below) replays the case instead: 32 concurrent gzip bodies inflating to
 * ~30 MB each, peak RSS with the byte budget off (as before it) and on, in one run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, mkdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { agentRun, encodeBatch, type BenchSpan } from './genai-spans.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = path.join(ROOT, 'bench', 'out');
const MiB = 1024 * 1024;

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at >= 0 ? Number(process.argv[at + 1]) : NaN;
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

const percentile = (values: readonly number[], p: number): number => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

/** Least-squares slope of y over x, and the residuals' standard deviation. */
function fit(points: ReadonlyArray<[number, number]>): { slope: number; noise: number } {
  const n = points.length;
  if (n < 3) return { slope: NaN, noise: NaN };
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const [x, y] of points) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
  }
  const slope = sxy / sxx;
  const residuals = points.map(([x, y]) => y - (my + slope * (x - mx)));
  const noise = Math.sqrt(residuals.reduce((s, r) => s + r * r, 0) / (n - 2));
  return { slope, noise };
}

/** RSS and its high-water mark of a process, in MiB (Linux /proc). */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

const baseUrl = () => process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: baseUrl() });
  await admin.connect();
  const name = `rotscope_soak_${process.pid}_${Date.now()}`;
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(baseUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: baseUrl() });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

interface Child {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** `rotscope serve` from this checkout's sources, as a child process. */
async function startServer(env: Record<string, string>): Promise<Child> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-soak-'));
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'bin', 'rotscope.js'), 'serve', '--port', '0', '--log-level', 'info'],
    {
      env: {
        ...process.env,
        ROTSCOPE_FROM_SOURCE: '1',
        ROTSCOPE_DATA_DIR: dataDir,
        ROTSCOPE_ALLOW_PRIVATE_ADDRESSES: 'true', // the webhook sink is on loopback
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /rotscope listening on (http:\/\/[\d.:]+)/.exec(output);
      if (match) {
        clearInterval(timer);
        resolve(match[1]!);
      }
    }, 50);
    void exited.then(() => {
      clearInterval(timer);
      reject(new Error(`rotscope exited before listening:\n${output}`));
    });
  });
  return {
    url,
    process: child,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A webhook endpoint on loopback that answers 200 to everything and counts. */
async function startSink(): Promise<{ url: string; received: () => number; close(): void }> {
  let received = 0;
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received++;
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received: () => received,
    close: () => server.close(),
  };
}

async function api(url: string, method: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const parsed = (await response.json()) as Record<string, unknown>;
  if (response.status >= 300) throw new Error(`${method} ${url}: ${JSON.stringify(parsed)}`);
  return parsed;
}

const RUNS_PER_BATCH = 23; // 23 runs x 22 spans = 506 spans, about one 512-span exporter batch
let nextRun = 0;

/** One export request: 23 agent runs with content; one run per batch ends cut off (a finding). */
function nextBatch(): Buffer {
  const spans: BenchSpan[] = [];
  const base = BigInt(Date.now()) * 1_000_000n;
  for (let i = 0; i < RUNS_PER_BATCH; i++) {
    spans.push(...agentRun(nextRun++, 10, base, { cutOffLast: i === 0, content: true }));
  }
  return encodeBatch(spans);
}

interface Window {
  latencies: number[];
  ok: number;
  refused: number;
  other: number;
}

const emptyWindow = (): Window => ({ latencies: [], ok: 0, refused: 0, other: 0 });

interface Sample {
  t: number;
  phase: string;
  rssMiB: number;
  p50Ms: number;
  p99Ms: number;
  ok: number;
  refused429: number;
  other: number;
  sentPerSecond: number;
}

export interface SoakResult {
  backend: string;
  saturationRequestsPerSecond: number;
  spansPerRequest: number;
  steady: {
    minutes: number;
    requestsPerSecond: number;
    rssSlopeMiBPerMinute: number;
    rssNoiseMiB: number;
    rssChangeOverPhaseMiB: number;
    rssFlatWithinNoise: boolean;
    p99SlopeMsPerMinute: number;
    p99NoiseMs: number;
    p99FlatWithinNoise: boolean;
    p99Ms: number;
    medianRssMiB: number;
    refused429: number;
    /** How far the load generator fell behind its schedule, at most (ms). */
    generatorLagMs: number;
  };
  overload: {
    minutes: number;
    requestsPerSecond: number;
    ok: number;
    refused429: number;
    other: number;
    peakRssMiB: number;
    boundMiB: number;
    underBound: boolean;
    achievedRequestsPerSecond: number;
    generatorLagMs: number;
    /** p50 and p99 of every accepted (200) request of the phase, pooled (ms). */
    acceptedP50Ms: number;
    acceptedP99Ms: number;
    /** Share of the phase's requests answered 429. */
    refusedShare: number;
  };
  recovery: { minutes: number; p99Ms: number; refused429: number; medianRssMiB: number };
  deliveries: number;
  otherOutcomes: Record<string, number>;
  files: { json: string; svg: string };
}

export async function benchSoak(): Promise<SoakResult> {
  const minutes = flag('minutes', 20);
  const overloadMinutes = flag('overload-minutes', 2);
  const recoveryMinutes = flag('recovery-minutes', 1);
  const sampleMs = flag('sample-seconds', minutes >= 10 ? 10 : 5) * 1000;
  const database = await freshDatabase();
  const sink = await startSink();
  const server = await startServer({ DATABASE_URL: database.url });
  const pid = server.process.pid!;
  const maxInflightBytes = 128 * MiB; // the default, stated in the bound below
  try {
    const channel = await api(`${server.url}/api/channels`, 'POST', {
      type: 'webhook',
      name: 'soak sink',
      config: { url: sink.url },
    });
    await api(`${server.url}/api/alerts/context-rot`, 'PUT', {
      channels: [{ id: channel.id, minSeverity: 'info' }],
    });

    let window = emptyWindow();
    /** Latencies of the accepted requests of the current phase, pooled (not per sample). */
    let phaseLatencies: number[] = [];
    /** Answers other than 200 and 429 (status or error code), over the whole run. */
    const statuses: Record<string, number> = {};
    let sent = 0;
    const samples: Sample[] = [];
    const started = performance.now();
    let phase = 'saturation';
    const send = async (): Promise<void> => {
      const body = nextBatch();
      sent++;
      const at = performance.now();
      try {
        const response = await fetch(`${server.url}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-protobuf' },
          body,
        });
        await response.arrayBuffer();
        if (response.status === 200) {
          window.ok++;
          window.latencies.push(performance.now() - at);
          phaseLatencies.push(performance.now() - at);
        } else if (response.status === 429) window.refused++;
        else {
          window.other++;
          statuses[response.status] = (statuses[response.status] ?? 0) + 1;
        }
      } catch (error) {
        window.other++;
        const name = (error as { cause?: { code?: string } }).cause?.code ?? 'error';
        statuses[name] = (statuses[name] ?? 0) + 1;
      }
    };
    let lastSent = 0;
    let lastAt = performance.now();
    /** The most the load generator fell behind its schedule in a phase (ms). */
    let generatorLagMs = 0;
    const sample = () => {
      const now = performance.now();
      samples.push({
        t: Math.round((now - started) / 100) / 10,
        phase,
        rssMiB: Math.round(memoryOf(pid).rss),
        p50Ms: Math.round(percentile(window.latencies, 50)),
        p99Ms: Math.round(percentile(window.latencies, 99)),
        ok: window.ok,
        refused429: window.refused,
        other: window.other,
        sentPerSecond: Number(((sent - lastSent) / ((now - lastAt) / 1000)).toFixed(2)),
      });
      lastSent = sent;
      lastAt = now;
      window = emptyWindow();
      const last = samples.at(-1)!;
      process.stderr.write(
        `soak ${last.t}s ${last.phase}: rss ${last.rssMiB} MiB, p99 ${last.p99Ms} ms, ok ${last.ok}, 429 ${last.refused429}, other ${last.other}\n`,
      );
    };
    const sampler = setInterval(sample, sampleMs);
    // Peak RSS between samples (VmHWM is the lifetime peak: read it per phase from 1 s polls).
    let peakInPhase = 0;
    const poller = setInterval(() => {
      peakInPhase = Math.max(peakInPhase, memoryOf(pid).rss);
    }, 250);

    // 1. Saturation: 8 closed-loop senders.
    const saturationMs = 20_000;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (performance.now() - started < saturationMs) await send();
      }),
    );
    const saturatedOk = samples.reduce((s, x) => s + x.ok, 0) + window.ok;
    const saturation = saturatedOk / ((performance.now() - started) / 1000);

    /**
     * Open loop at `rate` requests/s for `ms`: requests start on schedule, answered or not.
     * Each send encodes its batch first (~16 ms of this process's CPU): when the generator
     * falls behind schedule it still yields to the event loop between sends, so responses are
     * read and timers fire (catching up in one synchronous burst once blocked this process for
     * minutes, and its own requests timed out unsent). How far it fell behind is reported.
     */
    const openLoop = async (rate: number, ms: number) => {
      const begin = performance.now();
      const inflight = new Set<Promise<void>>();
      for (let i = 0; ; i++) {
        const due = begin + (i * 1000) / rate;
        if (due - begin >= ms) break;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        else {
          generatorLagMs = Math.max(generatorLagMs, -wait);
          await new Promise((resolve) => setImmediate(resolve));
        }
        const request = send().finally(() => inflight.delete(request));
        inflight.add(request);
      }
      await Promise.all(inflight);
    };

    // 2. Steady at half the saturation rate.
    phase = 'steady';
    const steadyStart = samples.length;
    await openLoop(saturation / 2, minutes * 60_000);
    sample();
    const steadySamples = samples.slice(steadyStart);
    const steadyLagMs = generatorLagMs;
    generatorLagMs = 0;

    // 3. Overload at twice the saturation rate.
    phase = 'overload';
    peakInPhase = 0;
    phaseLatencies = [];
    const overloadStart = samples.length;
    await openLoop(saturation * 2, overloadMinutes * 60_000);
    sample();
    const overloadPeak = peakInPhase;
    const overloadLagMs = generatorLagMs;
    const overloadSamples = samples.slice(overloadStart);
    const overloadLatencies = phaseLatencies;

    // 4. Recovery at half the rate again.
    phase = 'recovery';
    const recoveryStart = samples.length;
    await openLoop(saturation / 2, recoveryMinutes * 60_000);
    sample();
    clearInterval(sampler);
    clearInterval(poller);
    const recoverySamples = samples.slice(recoveryStart);

    // The first fifth of the steady phase is warm-up (caches, JIT, pools): slopes after it.
    const settled = steadySamples.slice(Math.floor(steadySamples.length / 5));
    const rss = fit(settled.map((s) => [s.t / 60, s.rssMiB]));
    const p99 = fit(settled.filter((s) => s.ok > 0).map((s) => [s.t / 60, s.p99Ms]));
    const settledMinutes = settled.length > 1 ? (settled.at(-1)!.t - settled[0]!.t) / 60 : 0;
    const steadyLatencies = median(settled.map((s) => s.p99Ms).filter(Number.isFinite));
    const medianRss = median(settled.map((s) => s.rssMiB));
    // Stated bound: the steady RSS plus four times the byte budget (a body in flight, its
    // inflation, its decoded objects and the rows built from them).
    const bound = Math.round(medianRss + (4 * maxInflightBytes) / MiB);
    const sum = (list: Sample[], key: 'ok' | 'refused429' | 'other') =>
      list.reduce((s, x) => s + x[key], 0);
    const overloadOk = sum(overloadSamples, 'ok');
    const overloadRefused = sum(overloadSamples, 'refused429');
    const overloadOther = sum(overloadSamples, 'other');

    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    mkdirSync(OUT, { recursive: true });
    const files = {
      json: path.join(OUT, `soak-${stamp}.json`),
      svg: path.join(OUT, `soak-${stamp}.svg`),
    };
    const result: SoakResult = {
      backend: 'postgres',
      saturationRequestsPerSecond: Number(saturation.toFixed(2)),
      spansPerRequest: RUNS_PER_BATCH * 22,
      steady: {
        minutes,
        requestsPerSecond: Number((saturation / 2).toFixed(2)),
        rssSlopeMiBPerMinute: round2(rss.slope),
        rssNoiseMiB: round2(rss.noise),
        rssChangeOverPhaseMiB: round2(rss.slope * settledMinutes),
        // Flat: the drift the slope predicts over the phase is within twice the noise.
        rssFlatWithinNoise: Math.abs(rss.slope * settledMinutes) <= 2 * rss.noise,
        p99SlopeMsPerMinute: round2(p99.slope),
        p99NoiseMs: round2(p99.noise),
        p99FlatWithinNoise: Math.abs(p99.slope * settledMinutes) <= 2 * p99.noise,
        p99Ms: Math.round(steadyLatencies),
        medianRssMiB: Math.round(medianRss),
        refused429: sum(steadySamples, 'refused429'),
        generatorLagMs: Math.round(steadyLagMs),
      },
      overload: {
        minutes: overloadMinutes,
        requestsPerSecond: Number((saturation * 2).toFixed(2)),
        ok: overloadOk,
        refused429: overloadRefused,
        other: overloadOther,
        peakRssMiB: Math.round(overloadPeak),
        boundMiB: bound,
        underBound: overloadPeak <= bound,
        achievedRequestsPerSecond: Number(
          ((overloadOk + overloadRefused + overloadOther) / (overloadMinutes * 60)).toFixed(2),
        ),
        generatorLagMs: Math.round(overloadLagMs),
        acceptedP50Ms: Math.round(percentile(overloadLatencies, 50)),
        acceptedP99Ms: Math.round(percentile(overloadLatencies, 99)),
        refusedShare: round2(
          overloadRefused / Math.max(1, overloadOk + overloadRefused + overloadOther),
        ),
      },
      recovery: {
        minutes: recoveryMinutes,
        p99Ms: Math.round(median(recoverySamples.map((s) => s.p99Ms).filter(Number.isFinite))),
        refused429: sum(recoverySamples, 'refused429'),
        medianRssMiB: Math.round(median(recoverySamples.map((s) => s.rssMiB))),
      },
      deliveries: sink.received(),
      otherOutcomes: statuses,
      files,
    };
    writeFileSync(files.json, JSON.stringify({ result, samples }, null, 2));
    writeFileSync(files.svg, plot(samples, bound));
    return result;
  } finally {
    await server.stop();
    sink.close();
    await database.drop();
  }
}

function median(values: readonly number[]): number {
  return percentile(values, 50);
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

/** A small SVG: RSS (MiB, left axis) and p99 latency (ms, right axis) over time, phases shaded. */
function plot(samples: readonly Sample[], boundMiB: number): string {
  const width = 900;
  const height = 360;
  const pad = { left: 60, right: 60, top: 30, bottom: 40 };
  const tMax = Math.max(1, ...samples.map((s) => s.t));
  const rssMax = Math.max(boundMiB, ...samples.map((s) => s.rssMiB)) * 1.05;
  const p99s = samples.map((s) => s.p99Ms).filter(Number.isFinite);
  const p99Max = Math.max(1, ...p99s) * 1.05;
  const x = (t: number) => pad.left + (t / tMax) * (width - pad.left - pad.right);
  const yRss = (v: number) => height - pad.bottom - (v / rssMax) * (height - pad.top - pad.bottom);
  const yP99 = (v: number) => height - pad.bottom - (v / p99Max) * (height - pad.top - pad.bottom);
  const line = (points: Array<[number, number]>) =>
    points.map(([px, py], i) => `${i === 0 ? 'M' : 'L'}${px.toFixed(1)},${py.toFixed(1)}`).join('');
  const phases: string[] = [];
  const colors: Record<string, string> = {
    saturation: '#eee',
    steady: '#fff',
    overload: '#fde2e2',
    recovery: '#e2f0fd',
  };
  let from = 0;
  samples.forEach((s, i) => {
    const next = samples[i + 1];
    if (!next || next.phase !== s.phase) {
      phases.push(
        `<rect x="${x(from).toFixed(1)}" y="${pad.top}" width="${(x(s.t) - x(from)).toFixed(1)}" height="${height - pad.top - pad.bottom}" fill="${colors[s.phase] ?? '#fff'}"/>` +
          `<text x="${(x(from) + 4).toFixed(1)}" y="${pad.top + 12}" font-size="10">${s.phase}</text>`,
      );
      from = s.t;
    }
  });
  const rssPath = line(samples.map((s) => [x(s.t), yRss(s.rssMiB)]));
  const p99Path = line(
    samples.filter((s) => Number.isFinite(s.p99Ms)).map((s) => [x(s.t), yP99(s.p99Ms)]),
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">
${phases.join('\n')}
<line x1="${pad.left}" x2="${width - pad.right}" y1="${yRss(boundMiB)}" y2="${yRss(boundMiB)}" stroke="#c00" stroke-dasharray="4 3"/>
<text x="${pad.left + 4}" y="${yRss(boundMiB) - 4}" font-size="10" fill="#c00">RSS bound ${boundMiB} MiB</text>
<path d="${rssPath}" fill="none" stroke="#1f6feb" stroke-width="1.5"/>
<path d="${p99Path}" fill="none" stroke="#d97706" stroke-width="1.5"/>
<line x1="${pad.left}" x2="${pad.left}" y1="${pad.top}" y2="${height - pad.bottom}" stroke="#333"/>
<line x1="${width - pad.right}" x2="${width - pad.right}" y1="${pad.top}" y2="${height - pad.bottom}" stroke="#333"/>
<line x1="${pad.left}" x2="${width - pad.right}" y1="${height - pad.bottom}" y2="${height - pad.bottom}" stroke="#333"/>
<text x="${pad.left - 4}" y="${pad.top - 8}" font-size="11" fill="#1f6feb">RSS ${Math.round(rssMax)} MiB</text>
<text x="${pad.left - 4}" y="${height - pad.bottom + 4}" font-size="10" text-anchor="end">0</text>
<text x="${width - pad.right + 4}" y="${pad.top - 8}" font-size="11" fill="#d97706">p99 ${Math.round(p99Max)} ms</text>
<text x="${width / 2}" y="${height - 8}" font-size="11" text-anchor="middle">time (s), 0 to ${Math.round(tMax)}</text>
<text x="${width / 2}" y="16" font-size="13" text-anchor="middle">rotscope soak: RSS (blue) and p99 ingest latency (orange)</text>
</svg>
`;
}

/**
 * The case: 32 concurrent gzip bodies that inflate to ~30 MB each (valid OTLP
 * protobuf, GenAI spans with content), sent at once to a fresh server; the server's peak RSS
 * (VmHWM) with the byte budget effectively off (what main did before it) and with the
 * defaults, in the same run.
 */
export async function benchGzip32(): Promise<
  Array<{ budget: string; peakRssMiB: number; ok: number; refused429: number; other: number }>
> {
  const base = 1_700_000_000_000_000_000n;
  const perRun = encodeBatch(agentRun(nextRun++, 10, base)).length;
  const spans: BenchSpan[] = [];
  const runs = Math.floor((30 * 1000 * 1000) / perRun);
  for (let i = 0; i < runs; i++) spans.push(...agentRun(nextRun++, 10, base));
  const raw = encodeBatch(spans);
  const body = gzipSync(raw);
  const results = [];
  for (const [label, env] of [
    [
      'off (1 TB, as before)',
      {
        ROTSCOPE_MAX_INFLIGHT_BYTES: String(1e12),
        ROTSCOPE_MAX_WORKSPACE_INFLIGHT_BYTES: String(1e12),
      },
    ],
    ['default (128 MiB, 64 MiB per workspace)', {}],
  ] as const) {
    const database = await freshDatabase();
    const server = await startServer({ DATABASE_URL: database.url, ...env });
    const counts = { ok: 0, refused429: 0, other: 0 };
    try {
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          try {
            const response = await fetch(`${server.url}/v1/traces`, {
              method: 'POST',
              headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' },
              body,
            });
            await response.arrayBuffer();
            if (response.status === 200) counts.ok++;
            else if (response.status === 429) counts.refused429++;
            else counts.other++;
          } catch {
            counts.other++;
          }
        }),
      );
      results.push({
        budget: label,
        inflatedBytes: raw.length,
        gzipBytes: body.length,
        spansPerBody: spans.length,
        peakRssMiB: Math.round(memoryOf(server.process.pid!).hwm),
        ...counts,
      });
    } finally {
      await server.stop();
      await database.drop();
    }
  }
  return results;
}
