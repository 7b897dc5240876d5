/**
 * A drop that crosses runs, in a real Chromium against a real `rotscope serve`: LangChain.js
 * traced by OpenInference (the real capture in test/fixtures/real) sends every LLM call as a
 * trace of its own, so a history_lost finding's run holds one call and its strip cannot show
 * the drop. The run view says so and links to the conversation's strip
 * (`#/conversations/<id>/strip`), which shows both calls with the ▼ between them.
 */
import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
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

const CAPTURE = new URL(
  '../fixtures/real/langchain-openinference/otlp-json_langchain-openinference_4.1.1.json',
  import.meta.url,
);

interface Finding {
  id: string;
  detector: string;
  conversationId: string;
  runId: string;
}

describe.skipIf(browserMissing)('a drop across runs in chromium', () => {
  let browser: Browser;
  let rotscope: ConsoleServer;
  let lost: Finding;

  beforeAll(async () => {
    [browser, rotscope] = await Promise.all([launchBrowser(), startConsoleServer()]);
    const posted = await fetch(`${rotscope.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: readFileSync(CAPTURE),
    });
    expect(posted.status).toBe(200);
    lost = await eventually(
      async () => {
        const response = await fetch(`${rotscope.url}/api/findings?detector=history_lost`);
        const found = ((await response.json()) as { items: Finding[] }).items[0];
        expect(found).toBeDefined();
        return found!;
      },
      { timeout: 60_000, interval: 200 },
    );
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await rotscope?.stop();
  });

  it("the finding's one-call run links to the conversation's strip, which shows the drop", async () => {
    const { page, context, problems } = await openConsole(
      browser,
      `${rotscope.url}/#/findings/${lost.id}`,
    );
    await page.waitForURL(`**/#/runs/${lost.runId}?finding=${lost.id}`);
    const panel = page.getByRole('region', { name: 'What was lost' });
    await page.locator('canvas.strip-canvas[data-drawn-calls="1"]').waitFor();
    await panel.getByText('tokens lost').waitFor();
    expect(await page.locator('.run-meta').textContent()).toMatch(/^1 call · /);
    const link = panel.getByRole('link', { name: 'see the drop on the conversation’s strip' });
    await link.click();

    await page.waitForURL(
      `**/#/conversations/${encodeURIComponent(lost.conversationId)}/strip?finding=${lost.id}`,
    );
    await page.getByRole('heading', { name: `Conversation ${lost.conversationId}` }).waitFor();
    await page.locator('canvas.strip-canvas[data-drawn-calls="3"]').waitFor();
    expect(await page.locator('.run-meta').textContent()).toMatch(/^3 calls · /);
    const marker = page.locator('.strip-mark.drop-lost');
    expect(await marker.count()).toBe(1);
    // The same drop, now between two calls of the strip; no link out (the call before is here).
    await panel.getByText(/between call #\d+ and call #\d+/).waitFor();
    expect(await panel.getByRole('link', { name: /conversation’s strip/ }).count()).toBe(0);

    // Selecting the finding again from the list stays on the conversation's strip.
    await page.locator('.run-aside').getByRole('button').first().click();
    await page.waitForURL(`**/#/conversations/*/strip?finding=*`);
    await screenshot(page, 'conversation-strip');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('the conversation page links to its strip', async () => {
    const { page, context } = await openConsole(
      browser,
      `${rotscope.url}/#/conversations/${encodeURIComponent(lost.conversationId)}`,
    );
    await page.getByRole('link', { name: 'context growth strip →' }).click();
    await page.waitForURL(`**/#/conversations/*/strip`);
    await page.locator('canvas.strip-canvas[data-drawn-calls="3"]').waitFor();
    await context.close();
  });
});
