/**
 * What was lost shows the dropped messages' text for a Claude Code session once `rotscope
 * import` put its transcript in the store (issue 36 §5), in a real Chromium: a real 2.1.332
 * session that compacted sends its telemetry (the OTLP bodies the CLI exported) to a real
 * `rotscope serve`, then the user imports the transcript Claude Code wrote with the real command
 * (bin/rotscope.js, from their home folder, through the running server); the compaction's drop on
 * the run view lists the messages it dropped, the session's first prompt among them, word for word.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendClaudeCodeCapture } from '../helpers/claude-code-capture.ts';
import { runCli } from '../helpers/cli.ts';
import {
  browserMissing,
  eventually,
  launchBrowser,
  openConsole,
  screenshot,
  startConsoleServer,
  type ConsoleServer,
} from '../helpers/console.ts';

const DIR = path.join(import.meta.dirname, '../fixtures/claude-code/2.1.332/compaction');
const SESSION = 'bfd551e1-e298-4ff1-a11b-770bcccb0151';
const TRANSCRIPT = brotliDecompressSync(
  readFileSync(path.join(DIR, 'transcripts', `${SESSION}.jsonl.br`)),
).toString('utf8');
/** The session's first prompt (the compaction dropped it). */
const FIRST_PROMPT = (() => {
  for (const line of TRANSCRIPT.split('\n').filter(Boolean)) {
    const entry = JSON.parse(line) as { type?: string; message?: { content?: unknown } };
    if (entry.type === 'user' && typeof entry.message?.content === 'string')
      return entry.message.content;
  }
  throw new Error('no prompt in the transcript');
})();

describe.skipIf(browserMissing)('What was lost of a Claude Code session, after import', () => {
  let browser: Browser;
  let rotscope: ConsoleServer;
  let home: string;

  beforeAll(async () => {
    [browser, rotscope] = await Promise.all([launchBrowser(), startConsoleServer()]);
    home = mkdtempSync(path.join(tmpdir(), 'rotscope-browser-lost-'));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await rotscope?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('lists the dropped messages with their text once the transcript is imported', async () => {
    expect(await sendClaudeCodeCapture(rotscope.url, '2.1.332', 'compaction')).toBe(SESSION);
    const projects = path.join(home, '.claude', 'projects', '-tmp-work');
    mkdirSync(projects, { recursive: true });
    const file = path.join(projects, `${SESSION}.jsonl`);
    writeFileSync(file, TRANSCRIPT);
    const imported = await runCli(['import', path.join(home, '.claude', 'projects')], {
      env: { ...rotscope.storeEnv, HOME: home },
      timeoutMs: 120_000,
    });
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('merged, not added');

    let findingId = '';
    await eventually(
      async () => {
        const response = await fetch(`${rotscope.url}/api/conversations/${SESSION}/strip`);
        const strip = (await response.json()) as {
          findings: Array<{ findingId: string; detector: string }>;
        };
        const drop = strip.findings.find((f) => f.detector === 'history_lost');
        expect(drop).toBeDefined();
        const lost = (await (
          await fetch(`${rotscope.url}/api/findings/${drop!.findingId}/what-was-lost`)
        ).json()) as { dropped: { contentCaptured: boolean } };
        expect(lost.dropped.contentCaptured).toBe(true);
        findingId = drop!.findingId;
      },
      { timeout: 60_000, interval: 200 },
    );

    const { page, context, problems } = await openConsole(
      browser,
      `${rotscope.url}/#/conversations/${SESSION}/strip?finding=${findingId}`,
    );
    const section = page.getByRole('region', { name: 'What was lost' });
    const list = section.locator('.dropped-messages');
    await list.waitFor();
    const texts = await list.locator('.message-text').allInnerTexts();
    expect(texts.map((t) => t.trim())).toContain(FIRST_PROMPT.trim());
    expect(await section.locator('.not-captured').count()).toBe(0);
    // tool calls and results are named
    expect(await list.locator('.tool').count()).toBeGreaterThan(0);
    await screenshot(page, 'claude-code-what-was-lost');
    expect(problems.filter((p) => /pageerror|Uncaught/i.test(p))).toEqual([]);
    await context.close();
  }, 180_000);
});
