/**
 * The run view in a real Chromium against a real `rotscope serve` (PGlite, or PostgreSQL with
 * DATABASE_URL) fed by the real OpenTelemetry SDK exporter (test/helpers/run-view-scenario.ts):
 * a lost-history conversation shows its ▼, clicking it shows What was lost with the tokens and
 * the parts; with content capture off no message text appears anywhere on the page; with
 * content on the dropped messages' text is shown; a compacted drop is styled as info.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  browserMissing,
  launchBrowser,
  openConsole,
  screenshot,
  startConsoleServer,
  type ConsoleServer,
  eventually,
} from '../helpers/console.ts';
import {
  COMPACTED,
  EARLY_ANSWER,
  EARLY_QUESTION,
  LATEST_QUESTION,
  LOST_WITH_CONTENT,
  LOST_WITHOUT_CONTENT,
  SECRET_FILE_TEXT,
  SUMMARY_TEXT,
  SYSTEM_PROMPT,
  sendRunViewConversations,
} from '../helpers/run-view-scenario.ts';

interface StripFinding {
  findingId: string;
  detector: string;
  kind: string | null;
  index: number | null;
}

describe.skipIf(browserMissing)('run view in chromium', () => {
  let browser: Browser;
  let rotscope: ConsoleServer;
  const drops = new Map<string, StripFinding>();

  async function dropOf(conversation: string): Promise<StripFinding> {
    await eventually(
      async () => {
        const response = await fetch(`${rotscope.url}/api/conversations/${conversation}/strip`);
        const body = (await response.json()) as { findings?: StripFinding[] };
        const drop = body.findings?.find((f) => f.detector === 'history_lost');
        expect(drop).toBeDefined();
        drops.set(conversation, drop!);
      },
      { timeout: 60_000, interval: 200 },
    );
    return drops.get(conversation)!;
  }

  /** Script errors and CSP refusals (a missing /favicon.ico is the browser's, not the page's). */
  const scriptProblems = (problems: string[]) =>
    problems.filter((p) => /pageerror|Content Security Policy|Uncaught/i.test(p));

  /** The run (here: the one trace) of a conversation, as the Findings page links to it. */
  async function runOf(conversation: string): Promise<string> {
    const response = await fetch(`${rotscope.url}/api/conversations/${conversation}`);
    const body = (await response.json()) as { calls: Array<{ runId: string }> };
    return body.calls[0]!.runId;
  }

  /** Waits until the strip is drawn with `calls` bars. */
  async function stripDrawn(page: Page, calls: number): Promise<void> {
    // a locator that fails says what it waited for before the test's own timeout
    page.setDefaultTimeout(20_000);
    await page.locator(`canvas.strip-canvas[data-drawn-calls="${calls}"]`).waitFor();
  }

  beforeAll(async () => {
    [browser, rotscope] = await Promise.all([launchBrowser(), startConsoleServer()]);
    await sendRunViewConversations(rotscope.url);
    for (const conversation of [LOST_WITH_CONTENT, LOST_WITHOUT_CONTENT, COMPACTED])
      await dropOf(conversation);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await rotscope?.stop();
  });

  it('a lost-history conversation shows its ▼; clicking it shows What was lost with the tokens, the parts and (content captured) the dropped messages', async () => {
    const { page, context, problems } = await openConsole(
      browser,
      `${rotscope.url}/#/runs/${await runOf(LOST_WITH_CONTENT)}`,
    );
    await stripDrawn(page, 4);
    const drop = page.locator('button.strip-mark.drop-lost');
    expect(await drop.count()).toBe(1);
    expect(await drop.getAttribute('aria-label')).toBe('History lost at call 4');
    expect(await page.locator('button.strip-mark.drop-compacted').count()).toBe(0);

    // hover: the call under the pointer, by index math on the canvas
    const canvas = page.locator('canvas.strip-canvas');
    const box = (await canvas.boundingBox())!;
    const plot = box.width - 44;
    await page.mouse.move(box.x + plot * (1.5 / 4), box.y + box.height - 40);
    const tooltip = page.getByRole('tooltip');
    await tooltip.waitFor();
    const hovered = await tooltip.innerText();
    expect(hovered).toContain('#2');
    expect(hovered).toContain('gpt-4o-2024-08-06');
    expect(hovered).toContain('52.0k of 128.0k');
    expect(hovered).toMatch(/input 52\.0k · cache read – · cache\s+write – · output 250/);
    expect(hovered).toContain('read_file results');
    // the sub-agent's call is there too, marked as such
    await page.mouse.move(box.x + plot * (2.5 / 4), box.y + box.height - 40);
    await page.getByRole('tooltip').getByText('sub-agent ledger-researcher').waitFor();

    await drop.click();
    await eventually(() =>
      expect(page.url()).toContain(`finding=${drops.get(LOST_WITH_CONTENT)!.findingId}`),
    );
    const panel = page.getByRole('region', { name: 'What was lost' });
    await panel.getByText('37.0k tokens lost').waitFor();
    const text = await panel.innerText();
    expect(text).toContain('between call #2 and call #4');
    expect(text).toMatch(/most from read_file’s results \(\d+\.\dk\)/);
    expect(text).toContain('4 messages');
    expect(text).toContain(SECRET_FILE_TEXT);
    expect(text).toContain(EARLY_QUESTION);
    expect(text).toContain(EARLY_ANSWER);
    expect(text).toContain(SYSTEM_PROMPT);
    expect(text).toContain('no compaction was recorded');
    expect(text).not.toContain('not captured:');
    // the findings list beside the strip names it
    expect(await page.locator('.run-findings li.selected').innerText()).toContain('History lost');
    await screenshot(page, 'run-view');
    expect(scriptProblems(problems)).toEqual([]);
    await context.close();
  }, 60_000);

  it('with content capture off, What was lost says the content was not captured and no message text appears anywhere', async () => {
    const drop = drops.get(LOST_WITHOUT_CONTENT)!;
    const { page, context, problems } = await openConsole(
      browser,
      `${rotscope.url}/#/runs/${await runOf(LOST_WITHOUT_CONTENT)}`,
    );
    await stripDrawn(page, 3);
    await page.locator('button.strip-mark.drop-lost').click();
    const panel = page.getByRole('region', { name: 'What was lost' });
    await panel.getByText('Content was not captured').waitFor();
    const text = await panel.innerText();
    expect(text).toContain('37.0k tokens lost');
    expect(text).toMatch(/Lost: read_file’s results 3\d\.\dk tokens, earlier messages/);
    // hover every bar: no card may show content either
    const box = (await page.locator('canvas.strip-canvas').boundingBox())!;
    for (const k of [0, 1, 2]) {
      await page.mouse.move(box.x + (box.width - 44) * ((k + 0.5) / 3), box.y + box.height - 40);
      await page.getByRole('tooltip').waitFor();
    }
    const whole = (await page.evaluate('document.documentElement.outerHTML')) as string;
    for (const sent of [
      SECRET_FILE_TEXT,
      EARLY_QUESTION,
      EARLY_ANSWER,
      LATEST_QUESTION,
      SYSTEM_PROMPT,
      'ZEBRA',
      'PELICAN',
      'OSPREY',
    ])
      expect(whole).not.toContain(sent);
    expect(page.url()).toContain(`finding=${drop.findingId}`);
    await screenshot(page, 'run-view-no-content');
    expect(scriptProblems(problems)).toEqual([]);
    await context.close();
  }, 60_000);

  it('a compacted drop, opened from a run link with its finding selected, is styled as info and shows the summary that replaced the history', async () => {
    const drop = drops.get(COMPACTED)!;
    const runId = await runOf(COMPACTED);
    const { page, context, problems } = await openConsole(
      browser,
      `${rotscope.url}/#/runs/${runId}?finding=${drop.findingId}`,
    );
    await stripDrawn(page, 2);
    const marker = page.locator('button.strip-mark.drop-compacted');
    expect(await marker.getAttribute('class')).toContain('severity-info');
    expect(await marker.getAttribute('class')).toContain('selected');
    const colours = (await page.evaluate(
      `[getComputedStyle(document.querySelector('button.strip-mark.drop-compacted')).color,
        getComputedStyle(document.documentElement).getPropertyValue('--info').trim()]`,
    )) as [string, string];
    expect(colours).toEqual(['rgb(88, 166, 255)', '#58a6ff']);
    expect(await page.locator('button.strip-mark.drop-lost').count()).toBe(0);
    const panel = page.getByRole('region', { name: 'What was lost' });
    await panel.getByText(SUMMARY_TEXT).waitFor();
    const text = await panel.innerText();
    expect(text).toContain('compacted');
    expect(text).toContain(
      'A compaction (auto), seen from a compaction event: 60.0k → 4,000 tokens',
    );
    expect(text).not.toMatch(/span_event|claude_code_event|transcript_boundary/);
    await screenshot(page, 'run-view-compacted');
    expect(scriptProblems(problems)).toEqual([]);
    await context.close();
  }, 60_000);
});
