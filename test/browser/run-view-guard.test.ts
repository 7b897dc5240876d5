/**
 * The run view marks the calls Claude Code's tool-result guard acted on (issue 36 §4), in a real
 * Chromium against a real `rotscope serve`: a real 2.1.332 session (its spans as the CLI sent
 * them) and the guard's own command (bin/rotscope-guard.cjs, a child process with ROTSCOPE_URL at
 * the server) narrowing a whole-file Read in that session. The guard stamps its decision with the
 * time it ran, so the captured spans are moved in time around it: the calls up to the Read before
 * the decision, the calls after it after; the call after the decision is the one that carried the
 * narrowed read, and the strip marks it ◊ with what the guard did.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  browserMissing,
  eventually,
  launchBrowser,
  openConsole,
  screenshot,
  startConsoleServer,
  type ConsoleServer,
} from '../helpers/console.ts';

const REAL = fileURLToPath(
  new URL('../fixtures/real/claude-code-2.1.332/reread/', import.meta.url),
);
const GUARD = fileURLToPath(new URL('../../bin/rotscope-guard.cjs', import.meta.url));
const SESSION = '843c48b1-ad59-49b1-80f8-fb9e02b8b6f6';
/** The capture's call that followed its first Read (the 4th of five, by start time). */
const AFTER_READ_NS = 1_796_192_000_974_000_000n;

type Span = { startTimeUnixNano: string; endTimeUnixNano: string };
type Traces = { resourceSpans: Array<{ scopeSpans: Array<{ spans: Span[] }> }> };

/** Moves every time before `cut` by `before` ns and every time from it on by `after` ns. */
function moved(body: Traces, cut: bigint, before: bigint, after: bigint): Traces {
  const move = (ns: string) => String(BigInt(ns) + (BigInt(ns) < cut ? before : after));
  for (const resource of body.resourceSpans)
    for (const scope of resource.scopeSpans)
      for (const span of scope.spans) {
        span.startTimeUnixNano = move(span.startTimeUnixNano);
        span.endTimeUnixNano = move(span.endTimeUnixNano);
      }
  return body;
}

describe.skipIf(browserMissing)('the calls the guard acted on, on the run view', () => {
  let browser: Browser;
  let rotscope: ConsoleServer;
  let dir: string;

  beforeAll(async () => {
    [browser, rotscope] = await Promise.all([launchBrowser(), startConsoleServer()]);
    dir = mkdtempSync(path.join(tmpdir(), 'rotscope-browser-run-guard-'));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await rotscope?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('marks the call that carried the narrowed read, and says what the guard did', async () => {
    const big = path.join(dir, 'server.log');
    writeFileSync(big, `${'INFO request served in 12 ms '.repeat(3)}\n`.repeat(2_000)); // 174 KB
    const before = BigInt(Date.now()) * 1_000_000n;
    const guard = spawnSync(process.execPath, [GUARD], {
      input: JSON.stringify({
        session_id: SESSION,
        transcript_path: path.join(REAL, 'transcript.jsonl'),
        hook_event_name: 'PreToolUse',
        tool_name: 'Read',
        tool_input: { file_path: big },
      }),
      env: {
        ...process.env,
        ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
        HOME: dir,
        ROTSCOPE_URL: rotscope.url,
      },
      encoding: 'utf8',
    });
    const after = BigInt(Date.now()) * 1_000_000n;
    expect(guard.status).toBe(0);
    const answer = JSON.parse(guard.stdout) as { systemMessage: string };
    expect(answer.systemMessage).toMatch(/^rotscope guard: read lines 1-\d+ of server\.log /);
    const keptOut = Number(
      /kept_out=([\d,]+)/
        .exec(readFileSync(path.join(dir, '.rotscope', 'guard.log'), 'utf8'))![1]!
        .replace(/,/g, ''),
    );

    // the session's calls up to the Read end before the decision, the rest start after it
    for (const file of ['002-traces.json', '003-traces.json']) {
      const body = moved(
        JSON.parse(readFileSync(path.join(REAL, file), 'utf8')) as Traces,
        AFTER_READ_NS,
        before - 1_000_000_000n - AFTER_READ_NS,
        after + 1_000_000_000n - AFTER_READ_NS,
      );
      const response = await fetch(`${rotscope.url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
    }
    await eventually(async () => {
      const response = await fetch(`${rotscope.url}/api/conversations/${SESSION}/strip`);
      const strip = (await response.json()) as { calls: number; guard: unknown[] };
      expect(strip.calls).toBe(5);
      expect(strip.guard).toEqual([
        {
          index: 3,
          action: 'narrowed',
          tool: 'Read',
          resultTokens: expect.any(Number),
          budgetTokens: expect.any(Number),
          keptOutTokens: keptOut,
        },
      ]);
    });

    const { page, context, problems } = await openConsole(
      browser,
      `${rotscope.url}/#/conversations/${SESSION}/strip`,
    );
    const mark = page.locator('.guard-mark');
    await mark.waitFor();
    expect(await mark.count()).toBe(1);
    expect(await mark.getAttribute('data-call')).toBe('4');
    expect(await mark.textContent()).toBe('◊');
    // the console writes tokens as 9,999 or 38.2k (ui/src/format.ts)
    const kept =
      keptOut < 10_000 ? keptOut.toLocaleString('en-US') : `${(keptOut / 1000).toFixed(1)}k`;
    expect(await mark.getAttribute('title')).toBe(
      `#4: the guard narrowed a Read: ${kept} tokens kept out`,
    );
    expect((await page.locator('.run-guard').innerText()).trim()).toBe(
      '· the guard narrowed 1 read (◊ on the calls that carried it)',
    );
    expect(await page.locator('.strip-legend').innerText()).toContain(
      'the tool-result guard acted',
    );
    // the mark sits over the 4th of the five bars (the plot leaves 44 px on the right)
    const plot = await page.locator('.strip-canvas').boundingBox();
    const box = await mark.boundingBox();
    const bar = (box!.x + box!.width / 2 - plot!.x) / ((plot!.width - 44) / 5);
    expect(Math.floor(bar)).toBe(3);
    await screenshot(page, 'run-view-guard');
    expect(problems.filter((p) => /pageerror|Uncaught/i.test(p))).toEqual([]);
    await context.close();
  }, 120_000);
});
