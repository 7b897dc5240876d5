/**
 * A locked-out exporter is seen (issue 23 §2): Claude Code sending without the Authorization
 * header once lost its data silently. Here the real OTel JS trace exporter (the one Claude
 * Code's telemetry uses) sends to a real `rotscope serve` without a token, and with a read
 * token, after the first token closed the server's open mode; the Coverage page in a real
 * Chromium shows the refusals (status, route, sender, count, last seen) with what to set,
 * before any call is stored. A refusal of no workspace is listed for an admin session and only
 * counted for a read one; no token value is shown anywhere. Once the exporter gets through (new
 * data accepted after the last refusal) the section calms down and shows the refusals' age; a
 * new refusal makes it an alert again.
 */
import { SpanKind } from '@opentelemetry/api';
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
import { genAiChatAttributes, tracerProvider } from '../helpers/otel.ts';

interface CoverageRefusals {
  refusals: {
    items: Array<{ workspace: string | null; route: string; reason: string; count: number }>;
    withoutWorkspace: { count: number } | null;
  };
}

/** Exports `spans` chat spans through the real OTLP/HTTP protobuf exporter (refused or not). */
async function exportSpans(url: string, spans: number, token?: string): Promise<void> {
  const provider = tracerProvider({
    url,
    protocol: 'protobuf',
    serviceName: 'claude-code',
    ...(token ? { token } : {}),
  });
  const tracer = provider.getTracer('claude-code');
  for (let i = 0; i < spans; i++) {
    tracer
      .startSpan('chat claude-sonnet-4-5', {
        kind: SpanKind.CLIENT,
        attributes: genAiChatAttributes(i, 'locked-out'),
      })
      .end();
    await provider.forceFlush().catch(() => {}); // one refused export per span
  }
  await provider.shutdown().catch(() => {});
}

async function signIn(page: Page, token: string): Promise<void> {
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Findings' }).waitFor();
}

describe.skipIf(browserMissing)(
  'refused requests on the Coverage page',
  { timeout: 180_000 },
  () => {
    let browser: Browser;
    let rotscope: ConsoleServer;
    let admin: string;
    let read: string;

    beforeAll(async () => {
      [browser, rotscope] = await Promise.all([launchBrowser(), startConsoleServer()]);
      admin = await rotscope.createToken('admin');
      read = await rotscope.createToken('read', admin);
      // the server re-checks "open" within a second: wait until a request without a token is refused
      await eventually(
        async () => expect((await fetch(`${rotscope.url}/api/findings`)).status).toBe(401),
        { timeout: 20_000, interval: 200 },
      );
      await exportSpans(rotscope.url, 3); // no Authorization header at all
      await exportSpans(rotscope.url, 1, read); // a read token cannot send
      // counted in the database within a second
      await eventually(
        async () => {
          const response = await fetch(`${rotscope.url}/api/coverage`, {
            headers: { authorization: `Bearer ${admin}` },
          });
          const coverage = (await response.json()) as CoverageRefusals;
          expect(coverage.refusals.items).toContainEqual(
            expect.objectContaining({
              route: 'POST /v1/traces',
              reason: 'missing_token',
              count: 3,
            }),
          );
          expect(coverage.refusals.items).toContainEqual(
            expect.objectContaining({ route: 'POST /v1/traces', reason: 'scope:read:ingest' }),
          );
        },
        { timeout: 20_000, interval: 250 },
      );
    }, 180_000);
    afterAll(async () => {
      await browser?.close();
      await rotscope?.stop();
    });

    it('an admin sees the exporter locked out, with what to set, before any call is stored', async () => {
      const { page, context, problems } = await openConsole(browser, `${rotscope.url}/`);
      await signIn(page, admin);
      await page.goto(`${rotscope.url}/#/coverage`);
      const alert = page.locator('.refusals [role="alert"]');
      await alert.waitFor();
      // the three exports, the read token's and the test's own probes of /api/findings
      expect(await alert.textContent()).toMatch(/\d+ requests were refused for their token/);
      // no call arrived: the page says so too
      await page.getByText('No calls stored yet').waitFor();

      const missing = page.locator(
        'tr[data-refusal="missing_token"][data-route="POST /v1/traces"]',
      );
      const cells = await missing.locator('td').allTextContents();
      expect(cells[0]).toBe('401 no token sent');
      expect(cells[2]).toBe('OTel-OTLP-Exporter-JavaScript');
      expect(cells[3]).toBe('none (no valid token)');
      expect(cells[4]).toBe('3');
      expect(cells[5]).not.toBe('');
      expect(cells[6]).toContain('Your exporter sends no token');
      expect(cells[6]).toContain('OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer <token>');
      expect(cells[6]).toContain('rotscope token create --workspace default --scope ingest');

      const wrongScope = page.locator('tr[data-refusal="scope:read:ingest"]');
      const scopeCells = await wrongScope.locator('td').allTextContents();
      expect(scopeCells[0]).toBe('403 a token with scope "read" where "ingest" is needed');
      expect(scopeCells[3]).toBe('default');
      expect(scopeCells[6]).toContain('sending telemetry needs an ingest token');

      const text = (await page.locator('body').textContent()) ?? '';
      expect(text).not.toContain(admin);
      expect(text).not.toContain(read);
      expect(text).not.toMatch(/rs_(admin|read|ingest)_/);
      await screenshot(page, 'coverage-refusals');
      expect(problems).toEqual([]);
      await context.close();
    });

    it('a read session sees its workspace refused and the others only counted', async () => {
      const { page, context } = await openConsole(browser, `${rotscope.url}/`);
      await signIn(page, read);
      await page.goto(`${rotscope.url}/#/coverage`);
      await page.locator('tr[data-refusal="scope:read:ingest"]').waitFor();
      expect(await page.locator('tr[data-refusal="missing_token"]').count()).toBe(0);
      // the three exports and the test's own probes, as the API lists them to an admin
      const { refusals } = (await (
        await fetch(`${rotscope.url}/api/coverage`, {
          headers: { authorization: `Bearer ${admin}` },
        })
      ).json()) as CoverageRefusals;
      const withoutWorkspace = refusals.items
        .filter((r) => r.workspace === null)
        .reduce((n, r) => n + r.count, 0);
      expect(withoutWorkspace).toBeGreaterThanOrEqual(3);
      const counted = page.locator('.refusals-without-workspace');
      expect(await counted.textContent()).toContain(
        `${withoutWorkspace} requests without a valid token`,
      );
      expect(await counted.textContent()).toContain(
        'OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer <token>',
      );
      await context.close();
    });

    it('calms down once the exporter gets through, showing its age, and alarms again on a new refusal', async () => {
      const ingest = await rotscope.createToken('ingest', admin);
      await exportSpans(rotscope.url, 1, ingest); // the fixed exporter: stored
      await eventually(
        async () => {
          const { refusals } = (await (
            await fetch(`${rotscope.url}/api/coverage`, {
              headers: { authorization: `Bearer ${admin}` },
            })
          ).json()) as { refusals: { items: Array<{ settled: boolean }> } };
          expect(refusals.items.every((r) => r.settled)).toBe(true);
        },
        { timeout: 20_000, interval: 250 },
      );
      const { page, context } = await openConsole(browser, `${rotscope.url}/`);
      await signIn(page, admin);
      await page.goto(`${rotscope.url}/#/coverage`);
      const settled = page.locator('.refusals [role="status"]');
      await settled.waitFor();
      expect(await settled.textContent()).toMatch(
        /^Settled: the last refusal was (just now|\d+ min ago)/,
      );
      expect(await page.locator('.refusals [role="alert"]').count()).toBe(0);
      const missing = page.locator(
        'tr[data-refusal="missing_token"][data-route="POST /v1/traces"]',
      );
      expect(await missing.getAttribute('data-settled')).toBe('true');
      expect((await missing.locator('td').allTextContents())[5]).toContain('data accepted since');
      await screenshot(page, 'coverage-refusals-settled');

      await exportSpans(rotscope.url, 1); // locked out again
      await eventually(
        async () => {
          await page.reload();
          await page.locator('.refusals [role="alert"]').waitFor({ timeout: 2_000 });
        },
        { timeout: 20_000, interval: 500 },
      );
      expect(await page.locator('.refusals [role="alert"]').textContent()).toContain(
        'with nothing accepted after them',
      );
      expect(await missing.getAttribute('data-settled')).toBe('false');
      await context.close();
    });
  },
);
