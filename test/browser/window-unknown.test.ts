/**
 * A model no source knows, in the console (issue 34 §2): calls of a model id invented here, with
 * their token counts, sent over OTLP/HTTP JSON to a real `rotscope serve`. In Chromium the
 * Conversations list says "window unknown" (not a bare token count), the run view names the model
 * as "window unknown", and Coverage's Context too full row names the model, the calls not judged
 * and the window override that fixes it, with no telemetry advice.
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
  eventually,
} from '../helpers/console.ts';
import { jsonRequest, jsonSpan } from '../helpers/otlp-bodies.ts';

/** No catalog row, family or agent knows it. */
const MODEL = 'zephyr-quill-7';
const TRACE = 'a1'.repeat(16);

describe.skipIf(browserMissing)('a model no source knows, in the console', () => {
  let browser: Browser;
  let rotscope: ConsoleServer;

  beforeAll(async () => {
    [browser, rotscope] = await Promise.all([launchBrowser(), startConsoleServer()]);
    const start = BigInt(Date.now() - 60_000) * 1_000_000n;
    const spans = [150_000, 170_000].map((input, i) =>
      jsonSpan({
        traceId: TRACE,
        name: `chat ${MODEL}`,
        startNs: start + BigInt(i) * 1_000_000_000n,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': MODEL,
          'gen_ai.conversation.id': 'conv-unknown',
          'gen_ai.usage.input_tokens': input,
          'gen_ai.usage.output_tokens': 100,
        },
      }),
    );
    const response = await fetch(`${rotscope.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(jsonRequest(spans)),
    });
    expect(response.status, await response.text()).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await rotscope?.stop();
  });

  it('the list, the run view and Coverage say "window unknown" and name the setting', async () => {
    const { page, context, problems } = await openConsole(
      browser,
      `${rotscope.url}/#/conversations`,
    );
    const row = page.locator('tr[data-conversation="conv-unknown"]');
    await row.locator('.window-unknown').waitFor();
    expect(await row.locator('.window-unknown').textContent()).toBe(
      'window unknown · 170.0k tokens',
    );
    expect(await row.locator('.window-unknown').getAttribute('title')).toContain(
      `no window known for ${MODEL}`,
    );

    await page.goto(`${rotscope.url}/#/runs/${TRACE}`);
    await page.locator('.run-meta .window-unknown').waitFor();
    expect(await page.locator('.run-meta .window-unknown').textContent()).toBe(
      ` · window unknown for ${MODEL}`,
    );

    // the evaluator judged the calls blind: Coverage names the model, the calls and the setting
    await eventually(
      async () => {
        await page.goto(`${rotscope.url}/#/coverage`);
        const hint = page.locator('tr[data-detector="context_too_full"] td.hint');
        await hint.waitFor();
        const text = (await hint.textContent()) ?? '';
        expect(text).toMatch(
          new RegExp(
            `^no window known for ${MODEL}: 2 calls not judged for context too full; set a window override: on the Context rot alert page`,
          ),
        );
        expect(text).not.toMatch(/telemetry/i);
      },
      { timeout: 20_000, interval: 500 },
    );
    await screenshot(page, 'coverage-window-unknown');
    expect(problems).toEqual([]);
    await context.close();
  }, 120_000);
});
