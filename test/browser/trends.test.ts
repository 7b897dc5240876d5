/**
 * Trends and before/after in the console (issue 37 §1), in Chromium, on stored data: known rows
 * in llm_calls, findings and guard_decisions of a real database (PGlite, or PostgreSQL with
 * DATABASE_URL) behind a real server on loopback. Every number the page shows is checked
 * against the API's answer to the same question (test/integration/api-trends.test.ts checks the
 * API's against a SQL count): the figures table and the points of each chart, split by model
 * and then by project; before/after at the first guard decision (enough conversations) and at
 * a date with too few, said plainly; and the reported cost in the conversation list and page.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LlmCall } from '../../src/model/calls.ts';
import type { FindingDraft } from '../../src/model/findings.ts';
import { llmCallRow } from '../../src/store/timeline.ts';
import { formatCost, formatRate } from '../../ui/src/format.ts';
import { callAt, seedFinding } from '../helpers/trends-seed.ts';
import type { BeforeAfter, Trends } from '../../ui/src/trends/types.ts';
import type { ConversationList } from '../../ui/src/conversations/types.ts';
import {
  browserMissing,
  eventually,
  launchBrowser,
  openConsole,
  screenshot,
} from '../helpers/console.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const DAY_MS = 86_400_000;
const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
const DETECTORS = ['context_too_full', 'tool_takeover', 'history_lost', 'output_cut_off'] as const;
/** The first guard decision: 8 days ago at noon. */
const GUARD_MS = today - 8 * DAY_MS + 12 * 3_600_000;

describe.skipIf(browserMissing)('Trends and before/after in the console', () => {
  let browser: Browser;
  let server: TestServer;

  const api = async <T>(path: string) => (await fetch(`${server.url}${path}`)).json() as Promise<T>;
  const finding = (conv: string, detector: FindingDraft['detector']) =>
    seedFinding(server.store.db, conv, detector);

  beforeAll(async () => {
    [browser, server] = await Promise.all([launchBrowser(), startTestServer({ loops: false })]);
    const calls: LlmCall[] = [];
    // 22 conversations in the 7 days before the guard, 24 in the 7 days from it: two models,
    // two projects; context_too_full in every second one before, every sixth after
    for (let i = 0; i < 22; i++) {
      const model = i % 3 === 0 ? 'gpt-4o' : 'claude-sonnet-4-6';
      calls.push(
        callAt(`before-${i}`, GUARD_MS - (1 + (i % 6)) * DAY_MS, 0, {
          requestModel: model,
          responseModel: model,
          contextTokens: 150_000,
          contextWindow: 200_000,
          costUsd: i % 2 === 0 ? 0.5 : null,
        }),
        callAt(`before-${i}`, GUARD_MS - (1 + (i % 6)) * DAY_MS, 1, {
          requestModel: model,
          responseModel: model,
          contextTokens: 90_000,
          contextWindow: 200_000,
        }),
      );
    }
    for (let i = 0; i < 24; i++)
      calls.push(
        callAt(`after-${i}`, GUARD_MS + (i % 6) * DAY_MS + 60_000, 0, {
          requestModel: 'claude-sonnet-4-6',
          responseModel: 'claude-sonnet-4-6',
          contextTokens: 100_000,
          contextWindow: 200_000,
          costUsd: 0.25,
        }),
      );
    await server.store.db
      .insertInto('llm_calls')
      .values(calls.map((c) => llmCallRow(c)))
      .execute();
    for (let i = 0; i < 22; i += 2) await finding(`before-${i}`, 'context_too_full');
    for (let i = 0; i < 22; i += 5) await finding(`before-${i}`, 'output_cut_off');
    for (let i = 0; i < 24; i += 6) await finding(`after-${i}`, 'context_too_full');
    await finding('after-1', 'history_lost');
    for (let i = 0; i < 46; i += 4)
      await server.store.db
        .insertInto('conversations')
        .values({
          workspace_id: 'default',
          id: i < 22 ? `before-${i}` : `after-${i - 22}`,
          project: i % 8 === 0 ? '/srv/app/alpha-svc' : '/srv/app/beta-svc',
        })
        .execute();
    await server.store.db
      .insertInto('guard_decisions')
      .values({
        workspace_id: 'default',
        conversation_id: 'after-0',
        span_id: 'g1',
        at_ns: String(BigInt(GUARD_MS) * 1_000_000n),
        action: 'narrowed',
        tool: 'Read',
        result_tokens: 10_000,
        budget_tokens: 2_000,
        kept_out_tokens: 8_000,
      })
      .execute();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** The figures table and the chart points on the page equal the API's items. */
  async function expectPageShows(page: Page, by: string) {
    const answer = await api<Trends>(`/api/trends?by=${by}&bucket=day&days=30`);
    expect(answer.items.length).toBeGreaterThan(3);
    await eventually(async () =>
      expect(await page.locator('table.trend-table tbody tr').count()).toBe(answer.items.length),
    );
    const rows = await page.locator('table.trend-table tbody tr').evaluateAll((trs) =>
      trs.map((tr) => {
        const cell = (field: string) => tr.querySelector(`[data-field="${field}"]`)!;
        return {
          bucket: tr.getAttribute('data-bucket'),
          key: tr.getAttribute('data-key'),
          conversations: Number(cell('conversations').textContent),
          calls: Number(cell('calls').textContent),
          findings: Object.fromEntries(
            ['context_too_full', 'tool_takeover', 'history_lost', 'output_cut_off'].map((d) => [
              d,
              Number(cell(d).getAttribute('data-count')),
            ]),
          ),
          rates: ['context_too_full', 'tool_takeover', 'history_lost', 'output_cut_off'].map(
            (d) => cell(d).querySelector('.rate')!.textContent,
          ),
          cost: cell('costUsd').textContent,
          costValue: cell('costUsd').getAttribute('data-value'),
          tokens: Number(cell('tokensOverThreshold').getAttribute('data-value')),
        };
      }),
    );
    expect(rows).toEqual(
      answer.items.map((item) => ({
        bucket: item.bucket,
        key: item.key ?? '',
        conversations: item.conversations,
        calls: item.calls,
        findings: item.findings,
        rates: DETECTORS.map(
          (d) => `(${formatRate((100 * item.findings[d]) / item.conversations)})`,
        ),
        cost: formatCost(item.costUsd),
        costValue: item.costUsd === null ? '' : String(item.costUsd),
        tokens: item.tokensOverThreshold,
      })),
    );
    // one point per item in each detector's chart, its title the API's counts
    for (const d of DETECTORS) {
      const titles = await page
        .locator(`figure.trend-chart[data-detector="${d}"] circle title`)
        .allTextContents();
      expect(titles.sort()).toEqual(
        answer.items
          .map(
            (item) =>
              `${item.bucket} ${item.key ?? ''}: ${item.findings[d]} in ${item.conversations} conversations (${formatRate((100 * item.findings[d]) / item.conversations)} per 100)`,
          )
          .sort(),
      );
    }
  }

  it('charts findings per 100 conversations by detector, split by model, then by project; the figures are the API’s', async () => {
    const { page, context, problems } = await openConsole(browser, `${server.url}/#/findings`);
    await page.locator('nav a', { hasText: 'Trends' }).click();
    await page.locator('h1', { hasText: 'Trends' }).waitFor();
    await expectPageShows(page, 'model');
    await screenshot(page, 'trends-by-model');

    await page.getByLabel('Split by').selectOption('project');
    await eventually(async () => expect(page.url()).toContain('by=project'));
    await eventually(async () =>
      expect(await page.locator('tr[data-key="/srv/app/alpha-svc"]').count()).toBeGreaterThan(0),
    );
    await expectPageShows(page, 'project');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('before/after at the first guard decision shows each rate with its counts; a date with too few says so', async () => {
    const { page, context, problems } = await openConsole(
      browser,
      `${server.url}/#/trends?sideDays=7`,
    );
    await page.getByRole('button', { name: 'At the first guard decision' }).click();
    const answer = await api<BeforeAfter>('/api/trends/before-after?at=guard&days=7');
    expect(answer.before).toMatchObject({ conversations: 22, enough: true });
    expect(answer.after).toMatchObject({ conversations: 24, enough: true });
    const verdict = page.locator('.before-after .verdict');
    await eventually(async () => expect(await verdict.textContent()).toBe(answer.verdict));
    for (const d of DETECTORS) {
      const row = page.locator(`table.before-after-table tr[data-detector="${d}"]`);
      for (const side of ['before', 'after'] as const)
        expect(await row.locator(`[data-side="${side}"]`).textContent()).toBe(
          `${formatRate(answer[side].per100[d])} (${answer[side].findings[d]} in ${answer[side].conversations})`,
        );
      const change = answer.after.per100[d]! - answer.before.per100[d]!;
      expect(await row.locator('[data-field="change"]').textContent()).toBe(
        `${change > 0 ? '+' : ''}${formatRate(change)}`,
      );
    }
    const costs = page.locator('table.before-after-table tr[data-detector="cost"] td');
    expect(await costs.nth(1).textContent()).toBe(formatCost(answer.before.costUsd));
    expect(await costs.nth(2).textContent()).toBe(formatCost(answer.after.costUsd));
    await screenshot(page, 'trends-before-after-guard');

    // two days before the guard, with a day each side: too few, said plainly
    const date = new Date(GUARD_MS - 2 * DAY_MS).toISOString().slice(0, 10);
    await page.getByLabel('Days each side').fill('1');
    await eventually(async () => expect(page.url()).toContain('sideDays=1'));
    await page.getByLabel('Change date').fill(date);
    await page.getByRole('button', { name: 'Compare' }).click();
    const few = await api<BeforeAfter>(`/api/trends/before-after?at=${date}&days=1`);
    expect(few.before.enough && few.after.enough).toBe(false);
    await eventually(async () => expect(await verdict.textContent()).toBe(few.verdict));
    expect(few.verdict).toMatch(/^Too few conversations to tell/);
    expect(
      await page.locator('table.before-after-table [data-field="change"]').allTextContents(),
    ).toEqual(DETECTORS.map(() => 'too few to tell'));
    expect(problems).toEqual([]);
    await context.close();
  });

  it('shows the reported cost of each conversation in the list and on its page', async () => {
    const { page, context, problems } = await openConsole(browser, `${server.url}/#/conversations`);
    const list = await api<ConversationList>('/api/conversations?limit=50');
    const costed = list.items.find((c) => c.costUsd !== null)!;
    const uncosted = list.items.find((c) => c.costUsd === null)!;
    expect(costed && uncosted).toBeTruthy();
    const cell = (id: string) => page.locator(`tr[data-conversation="${id}"] td.conversation-cost`);
    await cell(costed.id).waitFor();
    expect(await cell(costed.id).textContent()).toBe(formatCost(costed.costUsd));
    expect(await cell(uncosted.id).textContent()).toBe('–');
    await page.goto(`${server.url}/#/conversations/${costed.id}`);
    await eventually(async () =>
      expect(await page.locator('dd.conversation-cost').textContent()).toBe(
        `${formatCost(costed.costUsd)} as reported`,
      ),
    );
    expect(problems).toEqual([]);
    await context.close();
  });
});
