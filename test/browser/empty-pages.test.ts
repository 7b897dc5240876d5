/**
 * A newcomer's first look at the console is an empty store: the Findings and Conversations
 * pages say what to run (`rotscope claude-code install`, with `--url` for this server's address
 * and, once tokens exist, `--token`), not only that they are empty. Once a call arrives the
 * steps give way to the data. A real `rotscope serve` child, a real Chromium, and the real OTel
 * JS exporter sending to it.
 */
import { SpanKind } from '@opentelemetry/api';
import type { Browser, Page } from 'playwright-core';
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
import { genAiChatAttributes, tracerProvider } from '../helpers/otel.ts';

async function gettingStarted(page: Page, path: string): Promise<string> {
  await page.goto(path);
  const block = page.getByLabel('Getting started');
  await block.waitFor({ timeout: 15_000 });
  return (await block.textContent()) ?? '';
}

describe.skipIf(browserMissing)('empty pages', { timeout: 180_000 }, () => {
  let browser: Browser;
  let rotscope: ConsoleServer;

  beforeAll(async () => {
    [browser, rotscope] = await Promise.all([launchBrowser(), startConsoleServer()]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await rotscope?.stop();
  });

  it('name the install command while nothing is stored, then give way to the data', async () => {
    const { page, context } = await openConsole(browser, `${rotscope.url}/#/findings`);
    // The test server is not on the default 127.0.0.1:4318, so install needs its address.
    const install = `rotscope claude-code install --url ${rotscope.url}`;
    for (const path of ['#/findings', '#/conversations']) {
      const text = await gettingStarted(page, `${rotscope.url}/${path}`);
      expect(text, path).toContain(install);
      expect(text, path).toContain('rotscope import ~/.claude/projects');
      expect(text, path).toContain(`${rotscope.url}/v1/traces`);
      expect(text, path).not.toContain('--token');
    }
    await page.getByText('No conversations yet.').waitFor();
    await screenshot(page, 'conversations-empty');

    // Once a token exists an exporter needs one too: the command says so.
    const admin = await rotscope.createToken('admin');
    await eventually(
      async () => expect((await fetch(`${rotscope.url}/api/findings`)).status).toBe(401),
      { timeout: 20_000, interval: 200 },
    );
    await page.goto(`${rotscope.url}/#/findings`);
    await page.getByLabel('API token').fill(admin);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const signedIn = await gettingStarted(page, `${rotscope.url}/#/findings`);
    expect(signedIn).toContain(`${install} --token <an ingest token>`);
    expect(signedIn).toContain('Tokens page');
    await screenshot(page, 'findings-empty');

    // One call arrives (no finding in it): both pages drop the steps.
    const ingest = await rotscope.createToken('ingest', admin);
    const provider = tracerProvider({
      url: rotscope.url,
      protocol: 'protobuf',
      serviceName: 'claude-code',
      token: ingest,
    });
    provider
      .getTracer('claude-code')
      .startSpan('chat claude-sonnet-4-5', {
        kind: SpanKind.CLIENT,
        attributes: genAiChatAttributes(0, 'first-session'),
      })
      .end();
    await provider.shutdown();
    await eventually(
      async () => {
        await page.goto(`${rotscope.url}/#/conversations`);
        await page.getByRole('link', { name: /first-session/ }).waitFor({ timeout: 2_000 });
      },
      { timeout: 20_000, interval: 500 },
    );
    expect(await page.getByLabel('Getting started').count()).toBe(0);
    await page.goto(`${rotscope.url}/#/findings`);
    await page.getByText('No findings yet').waitFor();
    expect(await page.getByLabel('Getting started').count()).toBe(0);
    await context.close();
  });
});
