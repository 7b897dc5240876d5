/**
 * The console under test, as a user runs it: a real `rotscope serve` child (bin/rotscope.js, on
 * PGlite in a temp data dir or on a fresh PostgreSQL database when DATABASE_URL is set) and
 * Debian's Chromium driven by playwright-core.
 *
 * Chromium is not Node, so the network guard cannot hook it: it is launched with every
 * background service off, a resolver that answers NOTFOUND for every name but localhost, and a
 * proxy at a closed loopback port for anything not on loopback, so a page cannot reach past
 * the machine either.
 *
 * Without /usr/bin/chromium the browser suites are skipped with a message, unless
 * ROTSCOPE_REQUIRE_BROWSER=1 (set by .ci/run, which installs chromium), where they fail.
 */
import { vi } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startChildServer, type ChildServer } from './child-server.ts';
import { createTestDatabase, usingPostgres } from './store.ts';

export const CHROMIUM = process.env.ROTSCOPE_CHROMIUM ?? '/usr/bin/chromium';
export const browserMissing = !existsSync(CHROMIUM) && process.env.ROTSCOPE_REQUIRE_BROWSER !== '1';
if (browserMissing)
  console.warn(`browser tests skipped: no ${CHROMIUM} (apt-get install chromium; .ci/run does)`);

/** Screenshots a person can look at: git-ignored, kept by CI as artifacts. */
export const SCREENSHOT_DIR = fileURLToPath(
  new URL('../../test-artifacts/screenshots/', import.meta.url),
);

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-domain-reliability',
  '--disable-breakpad',
  '--metrics-recording-only',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1',
  // loopback is never proxied (Chromium's implicit bypass rules); everything else goes nowhere
  '--proxy-server=http://127.0.0.1:9',
];

/**
 * Launches Chromium. `loopbackNames` are resolved to 127.0.0.1 by Chromium's own resolver
 * rules (no DNS query is made) and not proxied: a page on such a name is what a DNS-rebinding
 * attacker's page is once its name points at the machine.
 */
export function launchBrowser(options: { loopbackNames?: string[] } = {}): Promise<Browser> {
  const names = options.loopbackNames ?? [];
  const args =
    names.length === 0
      ? CHROMIUM_ARGS
      : [
          ...CHROMIUM_ARGS.map((arg) =>
            arg.startsWith('--host-resolver-rules=')
              ? `--host-resolver-rules=${names.map((name) => `MAP ${name} 127.0.0.1`).join(', ')}, ${arg.slice('--host-resolver-rules='.length)}`
              : arg,
          ),
          `--proxy-bypass-list=${names.join(';')}`,
          // Chromium's own Local Network Access checks would stop such a page before rotscope
          // sees it; Firefox and Safari have none, so rotscope must hold without them.
          '--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights',
        ];
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args });
}

export interface ConsoleServer {
  url: string;
  server: ChildServer;
  /** The store a CLI beside the server uses: its data directory, or its PostgreSQL database. */
  storeEnv: Record<string, string>;
  /** Creates a token through the API (the first one needs the server open: no token yet). */
  createToken(scope: 'read' | 'ingest' | 'admin', bearer?: string): Promise<string>;
  stop(): Promise<void>;
}

/** Starts `rotscope serve` with the console, on this run's database kind. */
export async function startConsoleServer(env: Record<string, string> = {}): Promise<ConsoleServer> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-console-'));
  const databaseUrl = usingPostgres ? await createTestDatabase() : undefined;
  const server = await startChildServer({
    ROTSCOPE_DATA_DIR: dataDir,
    ROTSCOPE_EVALUATOR_QUIET_MS: '200',
    ROTSCOPE_EVALUATOR_POLL_MS: '100',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...env,
  });
  return {
    url: server.url,
    server,
    storeEnv: databaseUrl
      ? { DATABASE_URL: databaseUrl }
      : { ROTSCOPE_DATA_DIR: env.ROTSCOPE_DATA_DIR ?? dataDir },
    async createToken(scope, bearer) {
      const response = await fetch(`${server.url}/api/tokens`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
        },
        body: JSON.stringify({ scope }),
      });
      if (response.status !== 201)
        throw new Error(`token create: ${response.status} ${await response.text()}`);
      return ((await response.json()) as { token: string }).token;
    },
    async stop() {
      server.process.kill('SIGTERM');
      await server.exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface ConsolePage {
  page: Page;
  context: BrowserContext;
  /** Console errors and failed requests the page logged (CSP violations land here). */
  problems: string[];
}

/** A fresh browser context (no cookies) on `url`. */
export async function openConsole(browser: Browser, url: string): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  await page.goto(url);
  return { page, context, problems };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}${usingPostgres ? '-postgres' : ''}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * `vi.waitFor` with room for a loaded machine: its default gives a page 1 s to render what a
 * step asks for, which CI's busiest minutes (every project on two cores) went past.
 */
export const eventually = <T>(
  check: () => T | Promise<T>,
  options: { timeout?: number; interval?: number } = {},
) => vi.waitFor(check, { timeout: 15_000, interval: 50, ...options });
