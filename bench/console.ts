/**
 * `npm run bench -- console`: the run view of a 10,000-call conversation against a 10-call one,
 * measured in the same run on a real `rotscope serve` child (PGlite in a temp data dir) and
 * Debian's Chromium:
 * - API: `GET /api/conversations/:id/strip` (median and p95 of alternating requests, bytes);
 * - browser: time from the route change to the strip drawn and painted (the canvas marks
 *   itself drawn, then one animation frame), the longest main-thread task meanwhile, and the
 *   time from a pointer move to the hover card.
 * Both conversations are one trace each, sent as OTLP protobuf: a sawtooth of usage that
 * reaches ~97 % of gpt-4o's window and drops (history_lost) every 250 calls, with part sizes
 * (`rotscope.input.sizes`) so the bars stack.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { launchBrowser } from '../test/helpers/console.ts';
import { encodeBatch, type BenchSpan } from './genai-spans.ts';
import { startServerProcess } from './server-process.ts';

const BIG = 10_000;
const SMALL = 10;
const BATCH = 500;

type Attr = BenchSpan['attributes'][number];
const str = (key: string, value: string): Attr => ({ key, value: { stringValue: value } });
const int = (key: string, value: number): Attr => ({ key, value: { intValue: value } });

/** One conversation of `calls` chat spans in one trace; returns its trace id (the run id). */
function conversation(id: string, calls: number): { runId: string; batches: Buffer[] } {
  const traceId = randomBytes(16);
  const root = randomBytes(8);
  const base = BigInt(Date.now() - calls * 2_000 - 60_000) * 1_000_000n;
  const spans: BenchSpan[] = [
    {
      traceId,
      spanId: root,
      name: 'invoke_agent bench',
      kind: 1,
      startTimeUnixNano: base.toString(),
      endTimeUnixNano: (base + BigInt(calls + 1) * 2_000_000_000n).toString(),
      attributes: [str('gen_ai.operation.name', 'invoke_agent'), str('gen_ai.conversation.id', id)],
    },
  ];
  for (let i = 0; i < calls; i++) {
    const start = base + BigInt(i + 1) * 2_000_000_000n;
    const step = i % 250;
    const input = 5_000 + step * 480;
    spans.push({
      traceId,
      spanId: randomBytes(8),
      parentSpanId: root,
      name: 'chat gpt-4o',
      kind: 3,
      startTimeUnixNano: start.toString(),
      endTimeUnixNano: (start + 1_500_000_000n).toString(),
      attributes: [
        str('gen_ai.operation.name', 'chat'),
        str('gen_ai.provider.name', 'openai'),
        str('gen_ai.request.model', 'gpt-4o'),
        str('gen_ai.conversation.id', id),
        int('gen_ai.usage.input_tokens', input),
        int('gen_ai.usage.output_tokens', 200),
        {
          key: 'gen_ai.response.finish_reasons',
          value: { arrayValue: { values: [{ stringValue: 'tool_calls' }] } },
        },
        str(
          'rotscope.input.sizes',
          JSON.stringify({
            unit: 'tokens',
            system: 2_000,
            messages: input - 2_000,
            tools: { read_file: step * 200, bash: step * 120 },
          }),
        ),
      ],
    });
  }
  const batches: Buffer[] = [];
  for (let i = 0; i < spans.length; i += BATCH)
    batches.push(encodeBatch(spans.slice(i, i + BATCH)));
  return { runId: traceId.toString('hex'), batches };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const p95 = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))] ?? NaN;
const round = (x: number) => Math.round(x * 10) / 10;

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 600_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export async function benchConsole(options: { apiReps?: number; browserReps?: number } = {}) {
  const apiReps = options.apiReps ?? 15;
  const browserReps = options.browserReps ?? 7;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-bench-console-'));
  const server = await startServerProcess({
    ROTSCOPE_DATA_DIR: dataDir,
    ROTSCOPE_EVALUATOR_QUIET_MS: '200',
    ROTSCOPE_LOG_LEVEL: 'warn',
  });
  const browser = await launchBrowser();
  try {
    const sizes = { big: BIG, small: SMALL } as const;
    const runs: Record<keyof typeof sizes, string> = { big: '', small: '' };
    const seedStart = performance.now();
    for (const [name, calls] of Object.entries(sizes) as Array<[keyof typeof sizes, number]>) {
      const { runId, batches } = conversation(`bench-console-${name}`, calls);
      runs[name] = runId;
      for (const body of batches) {
        const response = await fetch(`${server.url}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-protobuf' },
          body,
        });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`ingest answered ${response.status}`);
      }
    }
    const stripUrl = (name: keyof typeof sizes) =>
      `${server.url}/api/conversations/bench-console-${name}/strip`;
    // seeded and evaluated: every call stored, and the findings count still for 3 s
    let findings = -1;
    let stableSince = Date.now();
    await until('the seeded calls and their findings', async () => {
      const response = await fetch(stripUrl('big'));
      if (response.status !== 200) return false;
      const body = (await response.json()) as { calls: number; findings: unknown[] };
      if (body.findings.length !== findings) {
        findings = body.findings.length;
        stableSince = Date.now();
      }
      return body.calls === BIG && findings > 0 && Date.now() - stableSince > 3_000;
    });
    const seedSeconds = (performance.now() - seedStart) / 1000;

    // API: alternate the two conversations so both see the same machine load
    const api = { big: [] as number[], small: [] as number[] };
    const bytes = { big: 0, small: 0 };
    for (let rep = -2; rep < apiReps; rep++) {
      for (const name of ['big', 'small'] as const) {
        const t0 = performance.now();
        const response = await fetch(stripUrl(name));
        const text = await response.text();
        const ms = performance.now() - t0;
        if (response.status !== 200) throw new Error(`strip answered ${response.status}`);
        bytes[name] = Buffer.byteLength(text);
        if (rep >= 0) api[name].push(ms);
      }
    }

    // browser: route change → strip drawn and painted; longest task; hover → card
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/#/coverage`);
    await page.locator('main').waitFor();
    await page.evaluate(`(() => {
      window.__longest = 0;
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
      }).observe({ type: 'longtask' });
    })()`);
    const drawn = { big: [] as number[], small: [] as number[] };
    const longest = { big: [] as number[], small: [] as number[] };
    const hover = { big: [] as number[], small: [] as number[] };
    for (let rep = -1; rep < browserReps; rep++) {
      for (const name of ['big', 'small'] as const) {
        await page.evaluate(`location.hash = '#/coverage'`);
        await page.locator('canvas.strip-canvas').waitFor({ state: 'detached' });
        await page.waitForTimeout(200);
        const result = (await page.evaluate(`(async () => {
          window.__longest = 0;
          const t0 = performance.now();
          location.hash = '#/runs/${runs[name]}';
          const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
          let canvas = null;
          while (!(canvas = document.querySelector('canvas.strip-canvas[data-drawn-calls="${sizes[name]}"]'))) await frame();
          await frame();
          const drawnMs = performance.now() - t0;
          const box = canvas.getBoundingClientRect();
          const h0 = performance.now();
          canvas.dispatchEvent(new MouseEvent('mousemove', { bubbles: true, clientX: box.left + box.width * 0.37, clientY: box.top + box.height - 40 }));
          while (!document.querySelector('.strip-tooltip')) await frame();
          const hoverMs = performance.now() - h0;
          await new Promise((resolve) => setTimeout(resolve, 100));
          return { drawnMs, hoverMs, longest: window.__longest };
        })()`)) as { drawnMs: number; hoverMs: number; longest: number };
        if (rep >= 0) {
          drawn[name].push(result.drawnMs);
          hover[name].push(result.hoverMs);
          longest[name].push(result.longest);
        }
      }
    }
    await context.close();

    const apiBig = median(api.big);
    const apiSmall = median(api.small);
    const drawnBig = median(drawn.big);
    const drawnSmall = median(drawn.small);
    return {
      calls: { big: BIG, small: SMALL },
      findingsInBig: findings,
      seedSeconds: round(seedSeconds),
      api: {
        bigMs: { median: round(apiBig), p95: round(p95(api.big)) },
        smallMs: { median: round(apiSmall), p95: round(p95(api.small)) },
        ratio: round(apiBig / apiSmall),
        bytes,
        bytesPerCallBig: round(bytes.big / BIG),
      },
      browser: {
        drawnBigMs: round(drawnBig),
        drawnSmallMs: round(drawnSmall),
        ratio: round(drawnBig / drawnSmall),
        longestTaskBigMs: round(Math.max(...longest.big)),
        longestTaskSmallMs: round(Math.max(...longest.small)),
        hoverBigMs: round(median(hover.big)),
        hoverSmallMs: round(median(hover.small)),
      },
      reps: { api: apiReps, browser: browserReps },
    };
  } finally {
    await browser.close();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
