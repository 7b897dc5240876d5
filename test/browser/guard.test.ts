/**
 * What the Claude Code tool-result guard did, in the console (issue 25 §1): a real 2.1.332 session
 * (its spans as the CLI sent them) and the guard's own command (bin/rotscope-guard.cjs, in a child
 * process, with ROTSCOPE_URL at the server) narrowing a whole-file Read in that session; the
 * Conversations page in Chromium shows the session with what the guard did and the tokens it
 * kept out of the context.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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

const REAL = fileURLToPath(
  new URL('../fixtures/real/claude-code-2.1.332/reread/', import.meta.url),
);
const GUARD = fileURLToPath(new URL('../../bin/rotscope-guard.cjs', import.meta.url));
const SESSION = '843c48b1-ad59-49b1-80f8-fb9e02b8b6f6';

describe.skipIf(browserMissing)("the guard's work in the console", () => {
  let browser: Browser;
  let rotscope: ConsoleServer;
  let dir: string;

  beforeAll(async () => {
    [browser, rotscope] = await Promise.all([launchBrowser(), startConsoleServer()]);
    dir = mkdtempSync(path.join(tmpdir(), 'rotscope-browser-guard-'));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await rotscope?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the session with the reads the guard narrowed and the tokens it kept out', async () => {
    for (const file of ['002-traces.json', '003-traces.json']) {
      const response = await fetch(`${rotscope.url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: readFileSync(path.join(REAL, file), 'utf8'),
      });
      expect(response.status).toBe(200);
    }
    const big = path.join(dir, 'server.log');
    writeFileSync(big, `${'INFO request served in 12 ms '.repeat(3)}\n`.repeat(20_000)); // ~1.7 MB
    const guard = spawnSync(process.execPath, [GUARD], {
      input: JSON.stringify({
        session_id: SESSION,
        transcript_path: path.join(REAL, 'transcript.jsonl'),
        hook_event_name: 'PreToolUse',
        tool_name: 'Read',
        tool_input: { file_path: big },
      }),
      env: {
        ...process.env,
        ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
        HOME: dir,
        ROTSCOPE_URL: rotscope.url,
      },
      encoding: 'utf8',
    });
    expect(guard.status).toBe(0);
    expect(JSON.parse(guard.stdout).hookSpecificOutput.updatedInput.offset).toBe(1);
    const logged = readFileSync(path.join(dir, '.rotscope', 'guard.log'), 'utf8');
    const keptOut = Number(/kept_out=([\d,]+)/.exec(logged)![1]!.replace(/,/g, ''));
    expect(keptOut).toBeGreaterThan(300_000);

    const { page, context } = await openConsole(browser, `${rotscope.url}/#/conversations`);
    const row = page.locator(`tr[data-conversation="${SESSION}"]`);
    const note = row.locator('.conversation-guard');
    await note.waitFor();
    expect(await note.textContent()).toMatch(
      /^guard: 1 narrowed, 0 warned, [\d.]+k tokens kept out$/,
    );
    expect(await note.getAttribute('title')).toBe('Read: 1 narrowed, 0 warned');
    expect(await row.locator('.conversation-agent').textContent()).toBe('Claude Code 2.1.332');
    await screenshot(page, 'conversations-guard');
    await context.close();
  });
});
