/**
 * The Channels page on a server that refuses private destinations (the default): a webhook to
 * a loopback address is refused when it is created, and the console shows the API's message,
 * which names ROTSCOPE_ALLOW_PRIVATE_ADDRESSES. Nothing is created.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  browserMissing,
  launchBrowser,
  openConsole,
  screenshot,
  startConsoleServer,
  type ConsoleServer,
} from '../helpers/console.ts';

describe.skipIf(browserMissing)('channels page without private destinations', () => {
  let browser: Browser;
  let rotscope: ConsoleServer;

  beforeAll(async () => {
    [browser, rotscope] = await Promise.all([launchBrowser(), startConsoleServer()]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await rotscope?.stop();
  });

  it('shows the refusal of a loopback webhook, naming ROTSCOPE_ALLOW_PRIVATE_ADDRESSES, and creates nothing', async () => {
    const { page, context } = await openConsole(browser, `${rotscope.url}/#/channels`);
    const form = page.getByRole('form', { name: 'New channel' });
    await form.getByLabel('Name').fill('local hook');
    await form.getByLabel('URL').fill('http://127.0.0.1:9/hook');
    await form.getByRole('button', { name: 'Create channel' }).click();
    const refusal = form.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('ROTSCOPE_ALLOW_PRIVATE_ADDRESSES');
    expect(await page.getByRole('article').count()).toBe(0);
    await screenshot(page, 'channels-private-refused');
    const listed = await fetch(`${rotscope.url}/api/channels`);
    expect(((await listed.json()) as { items: unknown[] }).items).toEqual([]);
    await context.close();
  });
});
