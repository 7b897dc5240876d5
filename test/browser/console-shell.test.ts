/**
 * The console's shell in a real Chromium against a real `rotscope serve`: served at `/` with a
 * CSP and no inline script, open on loopback with no tokens, sign-in with a pasted token kept
 * in an HttpOnly SameSite=Strict cookie (an ingest token refused there, with the reason), CSRF on
 * every state-changing request a browser makes, and a read token kept out of admin pages and
 * actions.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  browserMissing,
  launchBrowser,
  openConsole,
  startConsoleServer,
  type ConsoleServer,
  eventually,
} from '../helpers/console.ts';

describe.skipIf(browserMissing)('console shell in chromium', () => {
  let browser: Browser;
  let rotscope: ConsoleServer;

  beforeAll(async () => {
    [browser, rotscope] = await Promise.all([launchBrowser(), startConsoleServer()]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await rotscope?.stop();
  });

  it('serves the console at / with a CSP that forbids inline scripts, and is open on loopback with no token', async () => {
    const response = await fetch(`${rotscope.url}/`);
    expect(response.status).toBe(200);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await response.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    // The tab has an icon (the browser's own /favicon.ico request was a 404 before).
    expect(html).toContain('<link rel="icon" type="image/svg+xml" href="/favicon.svg" />');
    const icon = await fetch(`${rotscope.url}/favicon.svg`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);

    const { page, problems, context } = await openConsole(browser, `${rotscope.url}/#/findings`);
    await page.getByRole('link', { name: 'Channels' }).waitFor();
    expect(await page.getByText('open (loopback, no tokens)').count()).toBe(1);
    // No console error at all (CSP refusals and failed loads land here).
    expect(problems).toEqual([]);
    await context.close();
  });

  describe('with tokens', () => {
    let admin: string;
    let read: string;

    beforeAll(async () => {
      admin = await rotscope.createToken('admin');
      read = await rotscope.createToken('read', admin);
      // the server re-checks "open" every 2 s: wait until it asks for a token
      await eventually(
        async () => expect((await fetch(`${rotscope.url}/api/findings`)).status).toBe(401),
        { timeout: 20_000, interval: 200 },
      );
    });

    it('asks for a token, refuses a wrong one, and keeps a right one in an HttpOnly SameSite=Strict cookie', async () => {
      const { page, context } = await openConsole(browser, `${rotscope.url}/`);
      await page.getByLabel('API token').fill('rs_not_a_token');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').getByText('unknown or revoked token').waitFor();

      // An ingest token sends data but reads none: refused at sign-in, saying so and what to make.
      const ingest = await rotscope.createToken('ingest', admin);
      await page.getByLabel('API token').fill(ingest);
      await page.getByRole('button', { name: 'Sign in' }).click();
      const refusal = page.getByRole('alert').getByText('this is an ingest token');
      await refusal.waitFor();
      expect(await refusal.textContent()).toContain('--scope read');
      expect((await context.cookies()).some((cookie) => cookie.name === 'rotscope_session')).toBe(
        false,
      );

      await page.getByLabel('API token').fill(admin);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('link', { name: 'Tokens' }).waitFor();
      const cookies = await context.cookies();
      const session = cookies.find((cookie) => cookie.name === 'rotscope_session');
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api' });
      // the token is not readable by the page's scripts
      expect(await page.evaluate('document.cookie')).not.toContain(admin);

      // still signed in after a reload; signed out for good after Sign out
      await page.reload();
      await page.getByRole('link', { name: 'Tokens' }).waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('API token').waitFor();
      await context.close();
    });

    it('refuses a state-changing request from the page without the CSRF token, and accepts it with it', async () => {
      const { page, context } = await openConsole(browser, `${rotscope.url}/`);
      await page.getByLabel('API token').fill(admin);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('link', { name: 'Tokens' }).waitFor();
      const statuses = await page.evaluate(async () => {
        const body = JSON.stringify({ scope: 'read' });
        const headers = { 'content-type': 'application/json' };
        const without = await fetch('/api/tokens', { method: 'POST', headers, body });
        const session = (await (await fetch('/api/session')).json()) as { csrfToken: string };
        const withToken = await fetch('/api/tokens', {
          method: 'POST',
          headers: { ...headers, 'x-csrf-token': session.csrfToken },
          body,
        });
        return [without.status, withToken.status];
      });
      expect(statuses).toEqual([403, 201]);
      await context.close();
    });

    it('keeps a read token out of admin pages and actions', async () => {
      const { page, context } = await openConsole(browser, `${rotscope.url}/`);
      await page.getByLabel('API token').fill(read);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('link', { name: 'Findings' }).waitFor();
      expect(await page.getByRole('link', { name: 'Tokens' }).count()).toBe(0);
      expect(await page.getByRole('link', { name: 'Channels' }).count()).toBe(0);

      await page.goto(`${rotscope.url}/#/alert`);
      await page.getByRole('alert').getByText('needs an admin token').waitFor();
      const status = await page.evaluate(async () => {
        const session = (await (await fetch('/api/session')).json()) as { csrfToken: string };
        const response = await fetch('/api/tokens', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken },
          body: JSON.stringify({ scope: 'admin' }),
        });
        return response.status;
      });
      expect(status).toBe(403);
      await context.close();
    });
  });
});
