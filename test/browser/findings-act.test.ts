/**
 * Acting on findings in the console (issue 37 §2, §3), in Chromium against a real `rotscope
 * serve`: conversations of two projects send calls over OTLP/HTTP JSON, the evaluator finds
 * context too full in each, and on the Findings page the project filter narrows the list to the
 * findings the API's `?project=` answers (each row names its project), and "Mute new findings
 * like these" makes the mute the API then lists (Delete ends it); on a finding's run view a note
 * acknowledges it (the API then says so), the list marks it, and `Not acknowledged` leaves it
 * out.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hex, jsonRequest, jsonSpan } from '../helpers/otlp-bodies.ts';
import {
  browserMissing,
  eventually,
  launchBrowser,
  openConsole,
  screenshot,
  startConsoleServer,
  type ConsoleServer,
} from '../helpers/console.ts';

const ALPHA = '/srv/app/alpha-svc';
const BETA = '/srv/app/beta-svc';
/** Conversation → project; each makes one context_too_full finding (150k of a 200k window). */
const CONVERSATIONS: Array<[string, string]> = [
  ['alpha-1', ALPHA],
  ['alpha-2', ALPHA],
  ['beta-1', BETA],
];

interface FindingJson {
  id: string;
  conversationId: string;
  project: string | null;
  acknowledgedAt: string | null;
  acknowledgedNote: string | null;
}

describe.skipIf(browserMissing)('acting on findings in the console', () => {
  let browser: Browser;
  let rotscope: ConsoleServer;

  const findings = async (query = ''): Promise<FindingJson[]> => {
    const response = await fetch(`${rotscope.url}/api/findings?limit=200${query}`);
    expect(response.status).toBe(200);
    return ((await response.json()) as { items: FindingJson[] }).items;
  };

  beforeAll(async () => {
    [browser, rotscope] = await Promise.all([launchBrowser(), startConsoleServer()]);
    const start = BigInt(Date.now() - 120_000) * 1_000_000n;
    for (const [c, [conversationId, project]] of CONVERSATIONS.entries()) {
      const traceId = hex(16);
      const spans = [120_000, 150_000].map((input, i) =>
        jsonSpan({
          traceId,
          name: 'chat claude-sonnet-4-5',
          startNs: start + BigInt(c * 10 + i) * 1_000_000_000n,
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': 'claude-sonnet-4-5',
            'gen_ai.conversation.id': conversationId,
            'gen_ai.usage.input_tokens': input,
            'gen_ai.usage.output_tokens': 100,
            'process.working_directory': project,
          },
        }),
      );
      const response = await fetch(`${rotscope.url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(jsonRequest(spans)),
      });
      expect(response.status, await response.text()).toBe(200);
    }
    await eventually(async () => expect(await findings()).toHaveLength(CONVERSATIONS.length), {
      timeout: 30_000,
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await rotscope?.stop();
  });

  it('filters findings by project, mutes them, acknowledges one with a note, and marks it', async () => {
    const { page, context, problems } = await openConsole(browser, `${rotscope.url}/#/findings`);
    const shown = () =>
      page
        .locator('tr[data-finding]')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-finding')));
    const all = await findings();
    await eventually(async () =>
      expect((await shown()).sort()).toEqual(all.map((f) => f.id).sort()),
    );
    for (const finding of all)
      expect(
        await page.locator(`tr[data-finding="${finding.id}"] .finding-project`).textContent(),
      ).toBe(finding.project);

    // the project filter: what the page lists is what the API answers for ?project=
    const alpha = await findings(`&project=${encodeURIComponent(ALPHA)}`);
    expect(alpha.map((f) => f.conversationId).sort()).toEqual(['alpha-1', 'alpha-2']);
    const project = page.getByLabel('Project');
    await project.fill(ALPHA);
    await project.press('Enter');
    await eventually(async () =>
      expect((await shown()).sort()).toEqual(alpha.map((f) => f.id).sort()),
    );
    expect(new URL(page.url()).hash).toContain(`project=${encodeURIComponent(ALPHA)}`);
    await screenshot(page, 'findings-project');

    // mute what the filters name: the API holds the same mute; Delete ends it
    await page.getByLabel('How long').selectOption('7d');
    await page.getByRole('button', { name: 'Mute new findings like these' }).click();
    const muted = page.locator('.mute-list li[data-mute]');
    await muted.first().waitFor();
    const mutes = (await (await fetch(`${rotscope.url}/api/mutes`)).json()) as {
      items: Array<{ id: string; until: string }>;
    };
    expect(mutes.items).toEqual([
      expect.objectContaining({ detector: null, project: ALPHA, model: null, active: true }),
    ]);
    const days = (Date.parse(mutes.items[0]!.until) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThan(7.01);
    expect(await muted.getAttribute('data-mute')).toBe(mutes.items[0]!.id);
    expect(await muted.textContent()).toContain(`Muted: any detector · ${ALPHA} · any model`);
    await screenshot(page, 'findings-muted');
    await muted.getByRole('button', { name: 'Delete' }).click();
    await eventually(async () => expect(await muted.count()).toBe(0));
    const after = (await (await fetch(`${rotscope.url}/api/mutes`)).json()) as { items: unknown[] };
    expect(after.items).toEqual([]);

    // open one (its run view, the finding selected) and acknowledge it with a note
    const target = alpha.find((f) => f.conversationId === 'alpha-1')!;
    await page.locator(`tr[data-finding="${target.id}"] td a`).first().click();
    const form = page.getByRole('form', { name: 'Acknowledgement' });
    await form.waitFor();
    expect(new URL(page.url()).hash).toContain(`finding=${target.id}`);
    const button = form.getByRole('button', { name: 'Acknowledge' });
    expect(await button.isDisabled()).toBe(true); // no note yet
    await form.getByLabel('Note').fill('known: alpha reads whole files; guard turned on');
    await button.click();
    const done = page.locator('.acknowledgement.acknowledged');
    await done.waitFor();
    expect(await done.locator('.acknowledgement-note').textContent()).toBe(
      'known: alpha reads whole files; guard turned on',
    );
    await screenshot(page, 'finding-acknowledged');
    const stored = (await findings()).find((f) => f.id === target.id)!;
    expect(stored.acknowledgedNote).toBe('known: alpha reads whole files; guard turned on');
    expect(stored.acknowledgedAt).not.toBeNull();

    // the list marks it; "Not acknowledged" leaves it out, as the API's ?acknowledged=false does
    await page.goto(`${rotscope.url}/#/findings`);
    const row = page.locator(`tr[data-finding="${target.id}"]`);
    await row.locator('.acknowledged-mark').waitFor();
    expect(await row.getAttribute('class')).toBe('acknowledged');
    expect(await row.locator('.acknowledged-mark').getAttribute('title')).toContain(
      'guard turned on',
    );
    const others = all.filter((f) => f.id !== target.id);
    for (const finding of others)
      expect(
        await page.locator(`tr[data-finding="${finding.id}"] .acknowledged-mark`).count(),
      ).toBe(0);
    await page.getByLabel('Acknowledged').selectOption('false');
    const open = await findings('&acknowledged=false');
    expect(open.map((f) => f.id).sort()).toEqual(others.map((f) => f.id).sort());
    await eventually(async () =>
      expect((await shown()).sort()).toEqual(open.map((f) => f.id).sort()),
    );
    await screenshot(page, 'findings-not-acknowledged');
    expect(problems).toEqual([]);
    await context.close();
  });
});
