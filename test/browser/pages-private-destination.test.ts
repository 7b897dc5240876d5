/**
 * The Channels page on a server that refuses private destinations (the default): a webhook to
 * a loopback address is refused when it is created, and the console shows the API's message,
 * which says how to allow it (the channel's switch, ROTSCOPE_ALLOW_PRIVATE_ADDRESSES). Nothing
 * is created. With "Allow private address" ticked the same webhook is created and its test send
 * reaches a loopback receiver, with no restart; the card's switch turned off is refused while
 * the URL is private. A refused form is explained in its own words (no internal paths).
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  browserMissing,
  launchBrowser,
  openConsole,
  screenshot,
  startConsoleServer,
  type ConsoleServer,
} from '../helpers/console.ts';
import { startHttpReceiver, type HttpReceiver } from '../helpers/http-receiver.ts';

describe.skipIf(browserMissing)('channels page without private destinations', () => {
  let browser: Browser;
  let rotscope: ConsoleServer;
  let receiver: HttpReceiver;

  beforeAll(async () => {
    [browser, rotscope, receiver] = await Promise.all([
      launchBrowser(),
      startConsoleServer(),
      startHttpReceiver(),
    ]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await rotscope?.stop();
    await receiver?.close();
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
    expect(await refusal.textContent()).toContain('"Allow private address"');
    expect(await refusal.textContent()).toMatch(/^Webhook URL: address 127\.0\.0\.1/);
    expect(await page.getByRole('article').count()).toBe(0);
    await screenshot(page, 'channels-private-refused');
    const listed = await fetch(`${rotscope.url}/api/channels`);
    expect(((await listed.json()) as { items: unknown[] }).items).toEqual([]);
    await context.close();
  });

  it('creates a loopback webhook once "Allow private address" is ticked, and its test send arrives', async () => {
    const { page, context } = await openConsole(browser, `${rotscope.url}/#/channels`);
    const form = page.getByRole('form', { name: 'New channel' });
    await form.getByLabel('Name').fill('local receiver');
    await form.getByLabel('URL').fill(`${receiver.url}/hook`);
    const allow = form.getByLabel('Allow private address');
    expect(await allow.isChecked()).toBe(false);
    await allow.check();
    await form.getByRole('button', { name: 'Create channel' }).click();
    const card = page.getByRole('article', { name: 'Channel local receiver' });
    await card.waitFor();
    expect(await card.getByLabel('Allow private address').isChecked()).toBe(true);
    await card.getByRole('button', { name: 'Test send' }).click();
    const result = card.getByRole('status', { name: 'test send result' });
    await result.waitFor();
    expect(await result.textContent()).toContain('delivered');
    expect(receiver.requests.map((request) => request.path)).toEqual(['/hook']);
    await screenshot(page, 'channels-private-allowed');

    // Taking the permission away while the URL is private is refused, and the switch stays on.
    await card.getByLabel('Allow private address').click();
    const refusal = card.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('address 127.0.0.1');
    const stored = (await (await fetch(`${rotscope.url}/api/channels`)).json()) as {
      items: Array<{ name: string; config: Record<string, unknown> }>;
    };
    expect(stored.items.find((item) => item.name === 'local receiver')?.config).toMatchObject({
      allowPrivateAddress: true,
    });
    await context.close();
  });

  it('explains a refused email form in its own words, without internal paths', async () => {
    const { page, context } = await openConsole(browser, `${rotscope.url}/#/channels`);
    const form = page.getByRole('form', { name: 'New channel' });
    await form.getByLabel('Type').selectOption('email');
    await form.getByLabel('Name').fill('mail');
    await form.getByLabel('SMTP host').fill('smtp.example.com');
    await form.getByLabel('From', { exact: true }).fill('rotscope@example.com');
    await form.getByLabel('To', { exact: true }).fill('oncall@example.com, not-an-address');
    await form.getByRole('button', { name: 'Create channel' }).click();
    const refusal = form.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toBe('Email address 2 is not valid');

    await form.getByLabel('To', { exact: true }).fill('oncall@example.com');
    await form.getByLabel('Port', { exact: true }).fill('0');
    await form.getByRole('button', { name: 'Create channel' }).click();
    await vi.waitFor(async () =>
      expect(await refusal.textContent()).toBe('SMTP port must be a whole number from 1 to 65535'),
    );

    await form.getByLabel('Type').selectOption('slack');
    await form.getByLabel('Incoming webhook URL').fill('https://example.com/services/T/B/x');
    await form.getByRole('button', { name: 'Create channel' }).click();
    await vi.waitFor(async () =>
      expect(await refusal.textContent()).toContain('https://hooks.slack.com/'),
    );
    expect(await form.getByLabel('Allow private address').count()).toBe(0);
    await screenshot(page, 'channels-form-errors');
    await context.close();
  });
});
