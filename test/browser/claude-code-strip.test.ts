/**
 * The strip shows what the finding says (issue 23 §6), in a real Chromium against a real
 * `rotscope serve` fed what the real Claude Code CLI 2.1.332 exported (test/fixtures/claude-code,
 * replayed as it sent it), read the way a user reads it: the bars' colours on the canvas, the
 * hover card, the findings list and the marks.
 * - A compaction side call is drawn as a side call (in its lane, its own scale and colour), and
 *   the fullest main call in the status line's colour for its share (red at 86%), not grey.
 * - Read results stay on every call whose input still holds them, at the shares the
 *   tool_takeover finding gives ("60%, 74%, 67% over 3 calls").
 * - context_too_full's label and mark name the call its text gives the usage of.
 * - The colours come from the workspace's knobs: moving usageThreshold / usageCritical moves them.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendClaudeCodeCapture } from '../helpers/claude-code-capture.ts';
import {
  browserMissing,
  launchBrowser,
  openConsole,
  screenshot,
  startConsoleServer,
  type ConsoleServer,
  eventually,
} from '../helpers/console.ts';

interface Strip {
  calls: number;
  columns: { context: Array<number | null>; window: Array<number | null>; side: number[] };
  findings: Array<{ detector: string; summary: string; index: number | null }>;
  bands: { dimBelow: number; amberFrom: number; redFrom: number };
}

/** Where the canvas draws, from its data attributes (CSS pixels). */
interface Geometry {
  left: number;
  top: number;
  plotWidth: number;
  plotTop: number;
  baseline: number;
  laneTop: number;
  laneBottom: number;
}

describe.skipIf(browserMissing)('a real Claude Code session on the strip, in chromium', () => {
  let browser: Browser;
  let rotscope: ConsoleServer;
  let compaction: string;
  let largeResults: string;

  async function strip(conversation: string, detector: string): Promise<Strip> {
    let body: Strip | undefined;
    await eventually(
      async () => {
        const response = await fetch(`${rotscope.url}/api/conversations/${conversation}/strip`);
        body = (await response.json()) as Strip;
        expect(body.findings?.some((f) => f.detector === detector)).toBe(true);
      },
      { timeout: 60_000, interval: 200 },
    );
    return body!;
  }

  /** Opens a conversation's strip and waits until it is drawn with all its calls. */
  async function openStrip(conversation: string, calls: number) {
    const opened = await openConsole(
      browser,
      `${rotscope.url}/#/conversations/${conversation}/strip`,
    );
    opened.page.setDefaultTimeout(20_000);
    await opened.page.locator(`canvas.strip-canvas[data-drawn-calls="${calls}"]`).waitFor();
    return opened;
  }

  async function geometry(page: Page): Promise<Geometry> {
    const canvas = page.locator('canvas.strip-canvas');
    const box = (await canvas.boundingBox())!;
    const data = (await page.evaluate(
      `({ ...document.querySelector('canvas.strip-canvas').dataset })`,
    )) as Record<string, string>;
    return {
      left: box.x,
      top: box.y,
      plotWidth: Number(data['plotWidth']),
      plotTop: Number(data['plotTop']),
      baseline: Number(data['baseline']),
      laneTop: Number(data['laneTop']),
      laneBottom: Number(data['laneBottom']),
    };
  }

  /** The middle of call `i`'s column (all calls shown). */
  const xOf = (g: Geometry, calls: number, i: number) => ((i + 0.5) * g.plotWidth) / calls;

  /** The colour painted at (x, y) of the canvas, `#rrggbb`, or null where nothing is. */
  async function pixel(page: Page, x: number, y: number): Promise<string | null> {
    return (await page.evaluate(`(() => {
      const canvas = document.querySelector('canvas.strip-canvas');
      const ratio = canvas.width / canvas.clientWidth;
      const [r, g, b, a] = canvas
        .getContext('2d')
        .getImageData(Math.floor(${x} * ratio), Math.floor(${y} * ratio), 1, 1).data;
      if (a === 0) return null;
      return '#' + [r, g, b].map((v) => v.toString(16).padStart(2, '0')).join('');
    })()`)) as string | null;
  }

  /** The page's status line colours (its stylesheet's variables). */
  async function levels(page: Page): Promise<Record<'dim' | 'amber' | 'red', string>> {
    return (await page.evaluate(`(() => {
      const css = getComputedStyle(document.documentElement);
      const v = (name) => css.getPropertyValue(name).trim();
      return { dim: v('--dim'), amber: v('--amber'), red: v('--red') };
    })()`)) as Record<'dim' | 'amber' | 'red', string>;
  }

  /** The colour a share gets in `bands`; the strip's plain band is the only one not tested here. */
  const levelIn = (share: number, bands: Strip['bands']) =>
    share >= bands.redFrom
      ? 'red'
      : share >= bands.amberFrom
        ? 'amber'
        : share < bands.dimBelow
          ? 'dim'
          : 'normal';

  /** Hovers call `i` (in the lane for a side call) and returns its card's text. */
  async function hoverCard(page: Page, g: Geometry, calls: number, i: number, lane = false) {
    const y = lane ? g.laneBottom - 2 : g.baseline - 2;
    await page.mouse.move(g.left + xOf(g, calls, i), g.top + y);
    const tooltip = page.getByRole('tooltip');
    await tooltip.getByText(`#${i + 1} ·`).waitFor();
    return tooltip.innerText();
  }

  /** Checks the colour halfway up every main call's bar against its share in `bands`. */
  async function expectBandColours(page: Page, s: Strip, bands: Strip['bands']) {
    const g = await geometry(page);
    const colours = await levels(page);
    const seen: string[] = [];
    for (let i = 0; i < s.calls; i++) {
      const used = s.columns.context[i];
      const window = s.columns.window[i];
      if (s.columns.side[i]! >= 0 || !used || !window) continue;
      const share = used / window;
      const level = levelIn(share, bands);
      if (level === 'normal') continue;
      const y = g.baseline - (share * (g.baseline - g.plotTop)) / 2;
      expect(await pixel(page, xOf(g, s.calls, i), y), `call #${i + 1} at ${share}`).toBe(
        colours[level],
      );
      seen.push(level);
    }
    return seen;
  }

  beforeAll(async () => {
    // the captures are dated the day they were taken: no retention pass may age them out
    [browser, rotscope] = await Promise.all([
      launchBrowser(),
      startConsoleServer({ ROTSCOPE_RETENTION_DAYS: '0' }),
    ]);
    compaction = await sendClaudeCodeCapture(rotscope.url, '2.1.332', 'compaction');
    largeResults = await sendClaudeCodeCapture(rotscope.url, '2.1.332', 'large-results');
    await strip(compaction, 'context_too_full');
    await strip(largeResults, 'tool_takeover');
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await rotscope?.stop();
  });

  it("draws the compaction side call as a side call, and the fullest main call in its share's colour (red), not grey", async () => {
    const s = await strip(compaction, 'context_too_full');
    const { page, context, problems } = await openStrip(compaction, s.calls);
    const g = await geometry(page);
    const colours = await levels(page);
    const side = s.columns.side.flatMap((k, i) => (k >= 0 ? [i] : []));
    expect(side.length).toBeGreaterThan(0);

    // the fullest main call (86% of 200k) is red halfway up, where its unmeasured input is
    const shares = s.columns.context.map((c, i) =>
      s.columns.side[i]! >= 0 ? 0 : (c ?? 0) / (s.columns.window[i] ?? Infinity),
    );
    const fullest = shares.indexOf(Math.max(...shares));
    expect(shares[fullest]).toBeGreaterThanOrEqual(0.85);
    const plotHeight = g.baseline - g.plotTop;
    const middle = g.baseline - (shares[fullest]! * plotHeight) / 2;
    expect(await pixel(page, xOf(g, s.calls, fullest), middle)).toBe(colours.red);
    expect(await expectBandColours(page, s, s.bands)).toEqual(
      expect.arrayContaining(['dim', 'amber', 'red']),
    );

    for (const i of side) {
      // nothing of the side call above the baseline: not at the main thread's scale ...
      const x = xOf(g, s.calls, i);
      for (const y of [g.baseline - 2, g.baseline - plotHeight * 0.05, middle])
        expect(await pixel(page, x, y), `side call #${i + 1} at y ${y}`).toBeNull();
      // ... but in the lane under it, in the side calls' colour
      expect(await pixel(page, x, g.laneBottom - 1)).toBe('#8a94a0');
      expect(await hoverCard(page, g, s.calls, i, true)).toContain('side call (compact)');
    }
    await page.getByText('side call (a compaction, a title)').waitFor();
    await screenshot(page, 'claude-code-strip-compaction');
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  it('stacks the Read results on every call whose input still holds them, at the shares the finding gives', async () => {
    const s = await strip(largeResults, 'tool_takeover');
    const { page, context, problems } = await openStrip(largeResults, s.calls);
    const item = page.locator('.run-findings li', { hasText: 'Tool takeover' });
    const label = await item.getByRole('button').innerText();
    const text = await item.locator('.summary').innerText();
    // "Results of tool Read took 60%, 74%, 67%, then up to 63% of the input over 4 calls": the
    // three that made it fire, then the highest of the episode's later calls; calls #2–#5
    const said =
      /took ((?:\d+%, )*\d+%?)(?:, then up to (\d+%))? of the input over (\d+) calls/.exec(text)!;
    const shares = said[1]!.split(', ');
    const count = Number(said[3]);
    const range = /calls #(\d+)–#(\d+)/.exec(label)!;
    const first = Number(range[1]) - 1;
    expect(Number(range[2]) - first).toBe(count);

    const g = await geometry(page);
    const cards: string[] = [];
    for (let k = 0; k < count; k++) {
      const card = await hoverCard(page, g, s.calls, first + k);
      cards.push(/Read results [\d.k,]+ \((\d+%)\)/.exec(card)?.[1] ?? `none in: ${card}`);
    }
    expect(cards.slice(0, shares.length)).toEqual(shares);
    const later = cards.slice(shares.length).map((c) => Number.parseInt(c, 10));
    if (later.length > 0) expect(`${Math.max(...later)}%`).toBe(said[2]);

    // the last call no Read arrived on still shows them, in the Read colour of the legend
    const readColour = (await page.evaluate(`(() => {
      const item = [...document.querySelectorAll('.strip-legend li')]
        .find((li) => li.textContent.includes('Read results'));
      return getComputedStyle(item.querySelector('.swatch')).backgroundColor;
    })()`)) as string;
    const [r, gr, b] = readColour.match(/\d+/g)!.map(Number);
    const hex = `#${[r, gr, b].map((v) => v!.toString(16).padStart(2, '0')).join('')}`;
    for (const i of [first + shares.length - 1, s.calls - 1])
      expect(await pixel(page, xOf(g, s.calls, i), g.baseline - 2), `call #${i + 1}`).toBe(hex);
    expect(await hoverCard(page, g, s.calls, s.calls - 1)).toMatch(/Read results 42\.6k/);

    // selecting the finding highlights the calls it counts (the whole episode)
    await item.getByRole('button').click();
    await page.locator('.strip-selected').waitFor();
    const highlight = (await page.locator('.strip-selected').boundingBox())!;
    // (its 1px left border adds to the box)
    expect(Math.abs(highlight.x - g.left - (first * g.plotWidth) / s.calls)).toBeLessThan(2);
    expect(Math.abs(highlight.width - (count * g.plotWidth) / s.calls)).toBeLessThan(2);
    await screenshot(page, 'claude-code-strip-read-results');
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  it("labels context_too_full on the call its text is about: the fullest one's usage", async () => {
    const s = await strip(compaction, 'context_too_full');
    const { page, context, problems } = await openStrip(compaction, s.calls);
    const item = page.locator('.run-findings li', { hasText: 'Context too full' });
    const label = await item.getByRole('button').innerText();
    const text = await item.locator('.summary').innerText();
    const n = Number(/call #(\d+)/.exec(label)![1]);
    // "Context 86% full (172,000 of 200,000 tokens)"
    const said = /Context (\d+)% full \(([\d,]+) of ([\d,]+) tokens\)/.exec(text)!;
    const k = (v: string) => `${(Number(v.replaceAll(',', '')) / 1000).toFixed(1)}k`;
    const g = await geometry(page);
    const card = await hoverCard(page, g, s.calls, n - 1);
    expect(card).toContain(`${k(said[2]!)} of ${k(said[3]!)} (${said[1]}%)`);
    // the run's line says the same call is the fullest
    expect(await page.locator('.run-meta').innerText()).toContain(
      `fullest call #${n} at ${said[1]}% of its window`,
    );
    // its mark on the strip sits on that call and says so; selected, the panel names it too
    const mark = page.locator('button.strip-mark.mark-full');
    expect(await mark.getAttribute('aria-label')).toBe(`Context too full at call ${n}`);
    const markBox = (await mark.boundingBox())!;
    expect(markBox.x + markBox.width / 2 - g.left).toBeCloseTo(xOf(g, s.calls, n - 1), 0);
    await mark.click();
    const panel = page.getByRole('region', { name: 'Selected finding' });
    expect(await panel.getByRole('heading').innerText()).toContain(`Context too full · call #${n}`);
    expect(await panel.innerText()).toContain(said[0]);
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);

  it("takes its colours from the workspace's knobs: amber from usageThreshold, red from usageCritical", async () => {
    const s = await strip(compaction, 'context_too_full');
    const put = async (thresholds: Record<string, number>) => {
      const response = await fetch(`${rotscope.url}/api/alerts/context-rot`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ thresholds }),
      });
      expect(response.status).toBe(200);
    };
    // the default knobs: the 45% call is dim, the 70% one amber
    let opened = await openStrip(compaction, s.calls);
    let g = await geometry(opened.page);
    const colours = await levels(opened.page);
    const percentOf = (i: number) =>
      Math.round(((s.columns.context[i] ?? 0) / (s.columns.window[i] ?? Infinity)) * 100);
    const [at45, at70] = [45, 70].map((p) =>
      s.columns.context.findIndex((_, i) => s.columns.side[i] === -1 && percentOf(i) === p),
    ) as [number, number];
    expect([at45, at70]).not.toContain(-1);
    const middle = (i: number) =>
      g.baseline - ((s.columns.context[i]! / s.columns.window[i]!) * (g.baseline - g.plotTop)) / 2;
    expect(await pixel(opened.page, xOf(g, s.calls, at45), middle(at45))).toBe(colours.dim);
    expect(await pixel(opened.page, xOf(g, s.calls, at70), middle(at70))).toBe(colours.amber);
    await opened.context.close();

    await put({ usageThreshold: 0.4, usageCritical: 0.6 });
    try {
      opened = await openStrip(compaction, s.calls);
      const { page } = opened;
      g = await geometry(page);
      expect(await pixel(page, xOf(g, s.calls, at45), middle(at45))).toBe(colours.amber);
      expect(await pixel(page, xOf(g, s.calls, at70), middle(at70))).toBe(colours.red);
      const bands = { dimBelow: 0.4, amberFrom: 0.4, redFrom: 0.6 };
      await expectBandColours(page, s, bands);
      const legend = await page.locator('.strip-legend').innerText();
      expect(legend).toContain('from 40%');
      expect(legend).toContain('from 60%');
      expect(legend).not.toContain('from 70%');
      await screenshot(page, 'claude-code-strip-knobs');
      expect(opened.problems).toEqual([]);
      await opened.context.close();
    } finally {
      await put({ usageThreshold: 0.7, usageCritical: 0.85 });
    }
  }, 60_000);
});
