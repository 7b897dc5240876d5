/**
 * The Context rot alert page in a real Chromium against a real `rotscope serve`, fed by real
 * producers (LangChain.js traced by OpenInference, and the Langfuse SDK, exporting over the
 * real OTLP exporters; the LLM provider is the only fake): invalid knobs show the API's message
 * beside the knob and save nothing; knobs, a window override and a channel are saved from the
 * page after a preview; the next evaluation uses them, and its findings are what the preview
 * counted.
 *
 * To see "the next evaluation", the calls are stored by a server whose evaluator is off; after
 * the save it is stopped and a server with the evaluator on is started on the same database.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../helpers/child-server.ts';
import {
  browserMissing,
  launchBrowser,
  openConsole,
  screenshot,
  eventually,
} from '../helpers/console.ts';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.ts';
import { startHttpReceiver, type HttpReceiver } from '../helpers/http-receiver.ts';
import { runLangchainOpenInference } from '../helpers/producers/langchain-openinference.ts';
import { runLangfuse } from '../helpers/producers/langfuse.ts';
import { createTestDatabase, usingPostgres } from '../helpers/store.ts';

type Severity = 'info' | 'warning' | 'critical';
type Counts = Record<string, Record<Severity, number>>;
const DETECTORS = ['context_too_full', 'tool_takeover', 'history_lost', 'output_cut_off'];
const SEVERITIES: Severity[] = ['info', 'warning', 'critical'];

/** The knobs the page saves: far enough from the defaults that the counts change. */
const KNOBS = {
  usageThreshold: '0.15',
  usageCritical: '0.5',
  toolShare: '0.05',
  toolPersistCalls: '1',
  dropRatio: '0.2',
  dropMinTokens: '1000',
};
const OVERRIDE = { model: 'gpt-4o*', window: '100000' };

describe.skipIf(browserMissing)('the Context rot alert page in chromium', () => {
  let browser: Browser;
  let server: ChildServer;
  let llm: FakeLlm;
  let hook: HttpReceiver;
  let dataDir: string;
  let databaseUrl: string | undefined;
  let channelId: string;

  const start = (evaluator: boolean) =>
    startChildServer({
      ROTSCOPE_DATA_DIR: dataDir,
      ROTSCOPE_EVALUATOR: String(evaluator),
      ROTSCOPE_EVALUATOR_QUIET_MS: '200',
      ROTSCOPE_EVALUATOR_POLL_MS: '100',
      ROTSCOPE_ALLOW_PRIVATE_ADDRESSES: 'true',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    });
  const get = async <T>(url: string): Promise<T> => {
    const response = await fetch(`${server.url}${url}`);
    expect(response.status, url).toBe(200);
    return (await response.json()) as T;
  };
  /** The findings the evaluator stored, per detector and severity. */
  const storedCounts = async (): Promise<Counts> => {
    const counts = emptyCounts();
    let cursor: string | null = null;
    do {
      const page: { items: Array<{ detector: string; severity: Severity }>; next: string | null } =
        await get(`/api/findings?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
      for (const f of page.items) counts[f.detector]![f.severity] += 1;
      cursor = page.next;
    } while (cursor);
    return counts;
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-alert-'));
    databaseUrl = usingPostgres ? await createTestDatabase() : undefined;
    [browser, server, llm, hook] = await Promise.all([
      launchBrowser(),
      start(false),
      startFakeLlm(),
      startHttpReceiver(),
    ]);
    const opts = { rotscopeUrl: server.url, llmUrl: llm.url };
    await runLangchainOpenInference(opts);
    await runLangfuse(opts);
    // every exported call stored: each producer's loop (8 calls) and finding (2 calls) sessions
    await eventually(
      async () => {
        const list = await get<{ items: Array<{ calls: number }> }>('/api/conversations');
        expect(list.items.map((c) => c.calls).sort((a, b) => a - b)).toEqual([2, 2, 8, 8]);
      },
      { timeout: 60_000, interval: 200 },
    );
    const created = await fetch(`${server.url}/api/channels`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'webhook', name: 'on-call hook', config: { url: hook.url } }),
    });
    expect(created.status).toBe(201);
    channelId = ((await created.json()) as { id: string }).id;
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    if (server) {
      server.process.kill('SIGTERM');
      await server.exited;
    }
    await llm?.close();
    await hook?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('shows the API’s message beside each invalid knob and saves nothing', async () => {
    const { page, context } = await openConsole(browser, `${server.url}/#/alert`);
    await knob(page, 'toolShare').fill('1.5');
    await knob(page, 'usageCritical').fill('0.5');
    await page.getByRole('button', { name: 'Add override' }).click();
    await page.getByLabel('Model glob 1').fill('claude-*');
    await page.getByLabel('Window tokens 1').fill('0');
    await page.getByRole('button', { name: 'Save' }).click();

    await expect
      .poll(() => errorsOf(page, '[data-knob="toolShare"]'))
      .toEqual(['thresholds.toolShare must be a ratio between 0 and 1 (got 1.5)']);
    expect(await errorsOf(page, '[data-knob="usageCritical"]')).toEqual([
      'thresholds.usageCritical (0.5) must be at least thresholds.usageThreshold (0.7)',
    ]);
    expect(await errorsOf(page, '[data-override="0"]')).toEqual([
      'windowOverrides[0].window must be a positive integer of at most 100000000 tokens (got 0)',
    ]);
    expect(await page.getByTestId('alert-notice').textContent()).toContain('Not saved');
    // the valid knobs beside them were not saved either
    const stored = await get<{ updatedAt: string | null; windowOverrides: unknown[] }>(
      '/api/alerts/context-rot',
    );
    expect(stored).toMatchObject({ updatedAt: null, windowOverrides: [] });
    // the preview refuses them the same way, beside the same knob
    await page.getByRole('button', { name: 'Preview the last 7 days' }).click();
    await expect
      .poll(() => errorsOf(page, '[data-knob="toolShare"]'))
      .toEqual(['thresholds.toolShare must be a ratio between 0 and 1 (got 1.5)']);
    expect(await page.getByTestId('preview').count()).toBe(0);
    await context.close();
  });

  it('previews, saves knobs, an override and a channel, and the next evaluation finds what the preview counted', async () => {
    const { page, context, problems } = await openConsole(browser, `${server.url}/#/alert`);
    // defaults are shown beside the knobs
    await expect
      .poll(() => page.locator('[data-knob="usageThreshold"] .knob-default').textContent())
      .toBe(' Default: 0.7 (70%).');
    for (const [key, value] of Object.entries(KNOBS)) await knob(page, key).fill(value);
    // add two overrides, remove the first
    await page.getByRole('button', { name: 'Add override' }).click();
    await page.getByLabel('Model glob 1').fill('claude-*');
    await page.getByLabel('Window tokens 1').fill('300000');
    await page.getByRole('button', { name: 'Add override' }).click();
    await page.getByLabel('Model glob 2').fill(OVERRIDE.model);
    await page.getByLabel('Window tokens 2').fill(OVERRIDE.window);
    await page.locator('[data-override="0"]').getByRole('button', { name: 'Remove' }).click();
    // attach the channel from critical up, and test-send to it
    await page.getByLabel('Send to on-call hook').check();
    await page.getByLabel('Minimum severity for on-call hook').selectOption('critical');
    await page.getByRole('button', { name: 'Test send' }).click();
    await page.getByText('Sent (200)').waitFor();
    expect(hook.requests).toHaveLength(1);
    expect(JSON.parse(hook.requests[0]!.body)).toMatchObject({ type: 'test' });

    await page.getByRole('button', { name: 'Preview the last 7 days' }).click();
    await page.getByTestId('preview').waitFor();
    const preview = await previewCounts(page);
    const compared = await page
      .locator('.preview-total td')
      .allTextContents()
      .then((cells) => cells.slice(-2).map(Number));
    // the knobs matter: more than the defaults find in the same calls
    expect(compared[0]).toBeGreaterThan(compared[1]!);
    expect(await page.getByTestId('preview-scope').textContent()).toContain(
      'Replayed 20 calls in 4 conversations',
    );
    // the example runs open in the run view
    const example = page.locator('.preview-examples a').first();
    expect(await example.getAttribute('href')).toMatch(/^#\/runs\/.+/);

    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('alert-notice').getByText('Saved at').waitFor();
    await screenshot(page, 'alert-page');
    expect(problems).toEqual([]);
    const saved = await get<Record<string, unknown>>('/api/alerts/context-rot');
    expect(saved).toMatchObject({
      enabled: true,
      thresholds: Object.fromEntries(Object.entries(KNOBS).map(([k, v]) => [k, Number(v)])),
      windowOverrides: [{ model: OVERRIDE.model, window: Number(OVERRIDE.window) }],
      channels: [{ id: channelId, minSeverity: 'critical' }],
    });
    await context.close();

    // The next evaluation: a server with the evaluator on, on the same database.
    expect(await storedCounts()).toEqual(emptyCounts());
    server.process.kill('SIGTERM');
    await server.exited;
    server = await start(true);
    await eventually(async () => expect(await storedCounts()).toEqual(preview), {
      timeout: 60_000,
      interval: 250,
    });
    // ...and its critical findings went to the channel
    const critical = Object.values(preview).reduce((n, c) => n + c.critical, 0);
    expect(critical).toBeGreaterThan(0);
    await eventually(() => expect(hook.requests.length).toBeGreaterThanOrEqual(1 + critical), {
      timeout: 30_000,
      interval: 250,
    });
    for (const request of hook.requests.slice(1))
      expect(JSON.parse(request.body)).toMatchObject({ data: { severity: 'critical' } });
  }, 240_000);
});

function emptyCounts(): Counts {
  return Object.fromEntries(
    DETECTORS.map((d) => [d, { info: 0, warning: 0, critical: 0 }]),
  ) as Counts;
}

function knob(page: Page, key: string) {
  return page.locator(`[data-knob="${key}"] input`);
}

function errorsOf(page: Page, scope: string): Promise<string[]> {
  return page.locator(`${scope} [role="alert"]`).allTextContents();
}

/** The preview table's counts, per detector and severity. */
async function previewCounts(page: Page): Promise<Counts> {
  const counts = emptyCounts();
  for (const detector of DETECTORS) {
    for (const severity of SEVERITIES) {
      const cell = page.locator(
        `.preview-counts tr[data-detector="${detector}"] td[data-severity="${severity}"]`,
      );
      counts[detector]![severity] = Number(await cell.textContent());
    }
  }
  return counts;
}
