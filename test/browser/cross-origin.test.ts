/**
 * Web pages against the console's API, in a real Chromium (issue 21, items 1 and 2).
 * - DNS rebinding: a page on `attacker.example:PORT`, whose name Chromium resolves to 127.0.0.1
 *   (its resolver rules: no DNS query leaves the machine), is same-origin with the open server
 *   in the browser's eyes. It must read no conversation and create no token.
 * - Another local origin (a page on 127.0.0.1:OTHER_PORT: same site, other origin) posts to the
 *   API under a percent-encoded path (`/%61pi/channels/ID/test`), on the open server and on a
 *   locked one whose user is signed in (the SameSite=Strict cookie is sent: same site). No test
 *   message may reach the channel's webhook, while the console's own "Send test" does.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  browserMissing,
  launchBrowser,
  startConsoleServer,
  type ConsoleServer,
} from '../helpers/console.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A loopback webhook receiver that counts what reaches it. */
async function startSink() {
  let received = 0;
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received: () => received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A page on another loopback origin whose script posts to `targets` the ways a page can. */
async function startOtherOrigin() {
  const server = http.createServer((_request, response) =>
    response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><p>elsewhere</p>'),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The little of a page's DOM the posting script uses. */
interface PageElement {
  name: string;
  method: string;
  action: string;
  target: string;
  submit(): void;
  addEventListener(type: string, listener: (event: unknown) => void): void;
}
interface PageDocument {
  createElement(tag: string): PageElement;
  body: { append(...nodes: PageElement[]): void };
}

/** From `page`, sends every cross-origin request a page can make without CORS to each URL. */
async function postFromPage(page: Page, urls: string[]): Promise<void> {
  await page.evaluate(async (targets) => {
    // The page's own DOM (this runs in Chromium; the test's tsconfig has no DOM types).
    const document = (globalThis as unknown as { document: PageDocument }).document;
    for (const url of targets) {
      await fetch(url, {
        method: 'POST',
        mode: 'no-cors',
        credentials: 'include',
        body: '{}',
        headers: { 'content-type': 'text/plain' },
      }).catch(() => undefined);
      const form = document.createElement('form');
      form.method = 'POST';
      form.action = url;
      form.target = `frame-${Math.random()}`;
      const frame = document.createElement('iframe');
      frame.name = form.target;
      document.body.append(frame, form);
      const loaded = new Promise((resolve) => frame.addEventListener('load', resolve));
      form.submit();
      await Promise.race([loaded, new Promise((resolve) => setTimeout(resolve, 2_000))]);
    }
  }, urls);
}

describe.skipIf(browserMissing)('web pages against the API (real Chromium)', () => {
  let browser: Browser;
  let sink: Awaited<ReturnType<typeof startSink>>;
  let elsewhere: Awaited<ReturnType<typeof startOtherOrigin>>;

  beforeAll(async () => {
    [browser, sink, elsewhere] = await Promise.all([
      launchBrowser({ loopbackNames: ['attacker.example'] }),
      startSink(),
      startOtherOrigin(),
    ]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await sink?.close();
    await elsewhere?.close();
  });

  async function webhookChannel(rotscope: ConsoleServer, bearer?: string): Promise<string> {
    const response = await fetch(`${rotscope.url}/api/channels`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      },
      body: JSON.stringify({ type: 'webhook', name: 'sink', config: { url: sink.url } }),
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as { id: string }).id;
  }

  describe('the open server (no token yet)', () => {
    let rotscope: ConsoleServer;
    beforeAll(async () => {
      rotscope = await startConsoleServer({ ROTSCOPE_ALLOW_PRIVATE_ADDRESSES: 'true' });
    }, 120_000);
    afterAll(async () => rotscope?.stop());

    it('gives a rebinding page on attacker.example nothing: no conversations, no session, no token', async () => {
      const port = new URL(rotscope.url).port;
      const origin = `http://attacker.example:${port}`;
      const context = await browser.newContext();
      const page = await context.newPage();
      // The attacker's own page, as its server sent it before the name was pointed at us.
      await page.route(`${origin}/evil.html`, (route) =>
        route.fulfill({ contentType: 'text/html', body: '<!doctype html><p>hello</p>' }),
      );
      await page.goto(`${origin}/evil.html`);
      const answers = await page.evaluate(async () => {
        const conversations = await fetch('/api/conversations');
        const session = await fetch('/api/session');
        const token = await fetch('/api/tokens', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ scope: 'admin' }),
        });
        return {
          conversations: conversations.status,
          session: session.status,
          token: token.status,
          message: ((await conversations.json()) as { message: string }).message,
        };
      });
      expect(answers).toMatchObject({ conversations: 403, session: 403, token: 403 });
      expect(answers.message).toContain('attacker.example');
      expect(answers.message).toContain('ROTSCOPE_PUBLIC_URL');
      // Still open: the rebinding page made no token.
      const session = await fetch(`${rotscope.url}/api/session`);
      expect(((await session.json()) as { open: boolean }).open).toBe(true);
      await context.close();
    });

    it('the console on 127.0.0.1 and localhost works as before', async () => {
      const port = new URL(rotscope.url).port;
      for (const base of [rotscope.url, `http://localhost:${port}`]) {
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(`${base}/`);
        const status = await page.evaluate(async () => (await fetch('/api/conversations')).status);
        expect(status).toBe(200);
        await context.close();
      }
    });

    it('takes no test send from another origin, plain or percent-encoded', async () => {
      const id = await webhookChannel(rotscope);
      const before = sink.received();
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(elsewhere.url);
      await postFromPage(page, [
        `${rotscope.url}/%61pi/channels/${id}/test`,
        `${rotscope.url}/api/channels/${id}/%74est`,
        `${rotscope.url}/api/channels/${id}/test`,
      ]);
      await sleep(500);
      expect(sink.received() - before).toBe(0);
      await context.close();
    });
  });

  describe('a locked server whose user is signed in on 127.0.0.1', () => {
    let rotscope: ConsoleServer;
    let admin: string;
    beforeAll(async () => {
      rotscope = await startConsoleServer({ ROTSCOPE_ALLOW_PRIVATE_ADDRESSES: 'true' });
      admin = await rotscope.createToken('admin');
    }, 120_000);
    afterAll(async () => rotscope?.stop());

    it('takes no test send from another local origin under an encoded path, while the console’s own goes through', async () => {
      const id = await webhookChannel(rotscope, admin);
      const context = await browser.newContext();
      const consolePage = await context.newPage();
      await consolePage.goto(`${rotscope.url}/`);
      // The console's own GET /api/session sets the CSRF secret cookie; wait for it (the sign-in
      // form shows once it answered), or a second GET racing it gets a token for another secret.
      await consolePage.getByLabel('API token').waitFor();
      const signedIn = await consolePage.evaluate(async (token) => {
        const session = (await (await fetch('/api/session')).json()) as { csrfToken: string };
        const response = await fetch('/api/session', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken },
          body: JSON.stringify({ token }),
        });
        return response.status;
      }, admin);
      expect(signedIn).toBe(200);

      const before = sink.received();
      const page = await context.newPage();
      await page.goto(elsewhere.url);
      await postFromPage(page, [
        `${rotscope.url}/%61pi/channels/${id}/test`,
        `${rotscope.url}/api/%63hannels/${id}/test`,
        `${rotscope.url}/api/channels/${id}/test`,
      ]);
      await sleep(500);
      expect(sink.received() - before).toBe(0);

      // The same cookie from the console's own page, with its CSRF token: delivered.
      const own = await consolePage.evaluate(async (channel) => {
        const session = (await (await fetch('/api/session')).json()) as { csrfToken: string };
        const response = await fetch(`/api/channels/${channel}/test`, {
          method: 'POST',
          headers: { 'x-csrf-token': session.csrfToken },
        });
        return response.status;
      }, id);
      expect(own).toBe(200);
      expect(sink.received() - before).toBe(1);
      await context.close();
    });
  });
});
