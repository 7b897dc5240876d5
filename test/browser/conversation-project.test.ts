/**
 * Where a conversation runs, in the console (issue 23 §5): a real Claude Code 2.1.332 session (its
 * spans as the CLI sent them, test/fixtures/real/claude-code-2.1.332/reread/) whose SessionStart
 * hook (`rotscope hook`, in a child process with ROTSCOPE_URL at the server) reported its working
 * directory, and library conversations whose resource names a repository, a short directory or
 * nothing. In Chromium the Conversations list shows each project short (its last two parts) with
 * the full one in the tooltip, a search by part of it finds the row, and the conversation's page
 * shows it in full.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { jsonRequest, jsonSpan } from '../helpers/otlp-bodies.ts';
import {
  browserMissing,
  launchBrowser,
  openConsole,
  screenshot,
  startConsoleServer,
  type ConsoleServer,
  eventually,
} from '../helpers/console.ts';

const REAL = fileURLToPath(
  new URL('../fixtures/real/claude-code-2.1.332/reread/', import.meta.url),
);
const SESSION = '843c48b1-ad59-49b1-80f8-fb9e02b8b6f6';
const SESSION_PROJECT = '/home/dev/src/acme/payments-api';
/** Library conversations: their resource's project attribute (none for the last). */
const LIBRARY: Array<{ id: string; resource: Record<string, string>; full: string | null }> = [
  {
    id: 'conv-ledger',
    resource: { 'vcs.repository.url.full': 'git@github.com:acme/ledger.git' },
    full: 'git@github.com:acme/ledger.git',
  },
  { id: 'conv-short', resource: { 'process.working_directory': '/srv' }, full: '/srv' },
  { id: 'conv-nowhere', resource: {}, full: null },
];

/** One GenAI chat span of `id` as OTLP/HTTP JSON, a minute ago plus `offsetMs`. */
function chatBody(id: string, resource: Record<string, string>, offsetMs: number): unknown {
  const span = jsonSpan({
    traceId: Buffer.from(id).toString('hex').padEnd(32, '0').slice(0, 32),
    spanId: '00000000000000a1',
    startNs: BigInt(Date.now() - 60_000 + offsetMs) * 1_000_000n,
    durationNs: 500_000_000n,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.conversation.id': id,
      'gen_ai.usage.input_tokens': 2_000,
      'gen_ai.usage.output_tokens': 40,
    },
  });
  return jsonRequest(
    [span],
    { 'service.name': 'agent-app', ...resource },
    'conversation-project-test',
  );
}

describe.skipIf(browserMissing)("a conversation's project in the console", () => {
  let browser: Browser;
  let rotscope: ConsoleServer;
  let dir: string;

  const post = async (body: string) => {
    const response = await fetch(`${rotscope.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(response.status, await response.clone().text()).toBe(200);
  };

  beforeAll(async () => {
    [browser, rotscope] = await Promise.all([launchBrowser(), startConsoleServer()]);
    dir = mkdtempSync(path.join(tmpdir(), 'rotscope-browser-project-'));
    for (const file of ['002-traces.json', '003-traces.json'])
      await post(readFileSync(path.join(REAL, file), 'utf8'));
    const hook = await runCli(['hook'], {
      stdin: JSON.stringify({
        session_id: SESSION,
        transcript_path: path.join(REAL, 'transcript.jsonl'),
        cwd: SESSION_PROJECT,
        hook_event_name: 'SessionStart',
        source: 'startup',
      }),
      env: {
        HOME: dir,
        ROTSCOPE_URL: rotscope.url,
        ROTSCOPE_COMPACTION_LOG: path.join(dir, 'compactions.log'),
        ROTSCOPE_KNOBS_FILE: path.join(dir, 'knobs.json'),
        TMUX: '',
      },
    });
    expect(hook).toEqual({ code: 0, stdout: '', stderr: '' });
    for (const [i, c] of LIBRARY.entries())
      await post(JSON.stringify(chatBody(c.id, c.resource, i)));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await rotscope?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the list shows the short project with the full one in its title; a search by part of it finds the row', async () => {
    const { page, context, problems } = await openConsole(
      browser,
      `${rotscope.url}/#/conversations`,
    );
    const row = (id: string) => page.locator(`tr[data-conversation="${id}"]`);
    const project = (id: string) => row(id).locator('.conversation-project');
    await project(SESSION).waitFor();
    expect(await project(SESSION).textContent()).toBe('…/acme/payments-api');
    expect(await project(SESSION).getAttribute('title')).toBe(SESSION_PROJECT);
    expect(await row(SESSION).locator('.conversation-agent').textContent()).toBe(
      'Claude Code 2.1.332',
    );
    // a git remote: its last two parts without ".git"
    expect(await project('conv-ledger').textContent()).toBe('…/acme/ledger');
    expect(await project('conv-ledger').getAttribute('title')).toBe(
      'git@github.com:acme/ledger.git',
    );
    // two parts or fewer: as it is
    expect(await project('conv-short').textContent()).toBe('/srv');
    expect(await project('conv-short').getAttribute('title')).toBe('/srv');
    // no project reported: no line for it
    await row('conv-nowhere').waitFor();
    expect(await project('conv-nowhere').count()).toBe(0);
    await screenshot(page, 'conversations-project');

    const search = page.getByLabel('Search by id');
    await search.fill('payments-api');
    await search.press('Enter');
    await eventually(async () =>
      expect(
        await page
          .locator('tr[data-conversation]')
          .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-conversation'))),
      ).toEqual([SESSION]),
    );
    expect(problems).toEqual([]);
    await context.close();
  });

  it("the conversation's page shows the full project, and a dash for none", async () => {
    const { page, context, problems } = await openConsole(
      browser,
      `${rotscope.url}/#/conversations/${SESSION}`,
    );
    const fact = page.locator('dl.facts dd.conversation-project');
    await fact.waitFor();
    expect(await fact.textContent()).toBe(SESSION_PROJECT);
    await screenshot(page, 'conversation-project');

    await page.goto(`${rotscope.url}/#/conversations/conv-ledger`);
    await eventually(async () =>
      expect(await fact.textContent()).toBe('git@github.com:acme/ledger.git'),
    );
    await page.goto(`${rotscope.url}/#/conversations/conv-nowhere`);
    await eventually(async () => expect(await fact.textContent()).toBe('–'));
    expect(problems).toEqual([]);
    await context.close();
  });
});
