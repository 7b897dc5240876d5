/**
 * The findings, conversations, coverage, channels and tokens pages in a real Chromium against
 * a real `rotscope serve` (PGlite, or PostgreSQL with DATABASE_URL) fed by real producers: the
 * OTel SDK exporting GenAI chat spans over OTLP/HTTP (gpt-4o conversations, no finish reasons:
 * output_cut_off is blind to them) and the simulated Claude Code of the producer harness (a
 * sub-agent, a compaction's side call). One user journey per page, a screenshot of each.
 * Tokens come last: the first token ends the server's open (loopback, no token) mode.
 */
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
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.ts';
import { startHttpReceiver, type HttpReceiver } from '../helpers/http-receiver.ts';
import { agentConversation, tracerProvider } from '../helpers/otel.ts';
import {
  FINDING_SESSION,
  MODEL as CLAUDE_MODEL,
  SUBAGENT_ID,
  TOOLS_SESSION,
  runClaudeCode,
} from '../helpers/producers/claude-code.ts';

interface ApiFinding {
  id: string;
  detector: string;
  severity: string;
  model: string | null;
  runId: string;
  conversationId: string;
}

async function sendConversations(url: string, conversations: Record<string, number[]>) {
  const provider = tracerProvider({ url, protocol: 'protobuf', serviceName: 'agent-app' });
  const tracer = provider.getTracer('agent-app');
  const start = Date.now() - 60_000;
  for (const [id, inputs] of Object.entries(conversations))
    agentConversation(
      tracer,
      id,
      inputs.map((input) => ({ input })),
      start,
      { finishReasons: false },
    );
  await provider.shutdown();
}

// Each journey drives several pages on a shared, loaded machine: a generous test timeout.
describe.skipIf(browserMissing)('console pages in chromium', { timeout: 180_000 }, () => {
  let browser: Browser;
  let rotscope: ConsoleServer;
  let llm: FakeLlm;
  let receiver: HttpReceiver;
  let findings: ApiFinding[];

  const get = async <T>(path: string, token?: string): Promise<T> => {
    const response = await fetch(`${rotscope.url}${path}`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };

  beforeAll(async () => {
    [browser, rotscope, llm, receiver] = await Promise.all([
      launchBrowser(),
      startConsoleServer({ ROTSCOPE_ALLOW_PRIVATE_ADDRESSES: 'true' }),
      startFakeLlm(),
      startHttpReceiver(),
    ]);
    await sendConversations(rotscope.url, {
      'history-lost': [50_000, 20_000], // −60%, no marker: history_lost warning
      'context-critical': [90_000, 115_000], // 70%, then 90%: context_too_full
      healthy: [8_000, 9_500, 11_000],
    });
    await runClaudeCode({ rotscopeUrl: rotscope.url, llmUrl: llm.url });
    // the two gpt-4o findings and Claude Code's three (too full, compacted, cut off)
    await eventually(
      async () => {
        findings = (await get<{ items: ApiFinding[] }>('/api/findings?limit=200')).items;
        expect(findings.length).toBeGreaterThanOrEqual(5);
        expect(findings.map((f) => f.conversationId)).toEqual(
          expect.arrayContaining(['history-lost', 'context-critical', FINDING_SESSION]),
        );
      },
      { timeout: 60_000, interval: 250 },
    );
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await rotscope?.stop();
    await llm?.close();
    await receiver?.close();
  });

  const rowIds = (page: Page, attribute: string) =>
    page
      .locator(`tr[${attribute}]`)
      .evaluateAll((rows, name) => rows.map((row) => row.getAttribute(name as string)), attribute);

  it('findings: newest first, filtered by detector, severity, model and time; cursor pages; a channel link lands on the run', async () => {
    const { page, context, problems } = await openConsole(browser, `${rotscope.url}/#/findings`);
    await page.locator('tr[data-finding]').first().waitFor();
    expect(await rowIds(page, 'data-finding')).toEqual(findings.map((f) => f.id));

    await page.getByLabel('Detector').selectOption('history_lost');
    const lost = findings.filter((f) => f.detector === 'history_lost');
    expect(lost.length).toBeGreaterThanOrEqual(2); // gpt-4o lost, Claude Code compacted
    await eventually(async () =>
      expect(await rowIds(page, 'data-finding')).toEqual(lost.map((f) => f.id)),
    );
    await page.getByLabel('Severity').selectOption('warning');
    const lostWarnings = lost.filter((f) => f.severity === 'warning');
    await eventually(async () =>
      expect(await rowIds(page, 'data-finding')).toEqual(lostWarnings.map((f) => f.id)),
    );
    expect(page.url()).toContain('detector=history_lost');

    await page.getByLabel('Severity').selectOption('');
    await page.getByLabel('Detector').selectOption('');
    await page.getByLabel('Model').fill('gpt-4o');
    await page.getByLabel('Model').press('Enter');
    const gpt = findings.filter((f) => f.model === 'gpt-4o');
    expect(gpt.length).toBeGreaterThanOrEqual(2);
    await eventually(async () =>
      expect(await rowIds(page, 'data-finding')).toEqual(gpt.map((f) => f.id)),
    );
    await page.getByLabel('Time').selectOption('1h');
    await eventually(async () =>
      expect(await rowIds(page, 'data-finding')).toEqual(gpt.map((f) => f.id)),
    );
    await screenshot(page, 'findings');

    // two a page, following the API's cursor
    await page.goto(`${rotscope.url}/#/findings?limit=2`);
    await eventually(async () => expect(await rowIds(page, 'data-finding')).toHaveLength(2));
    for (let shown = 2; shown < findings.length; shown += 2) {
      await page.getByRole('button', { name: 'Older findings' }).click();
      await eventually(async () =>
        expect(await rowIds(page, 'data-finding')).toHaveLength(
          Math.min(shown + 2, findings.length),
        ),
      );
    }
    expect(await rowIds(page, 'data-finding')).toEqual(findings.map((f) => f.id));
    expect(await page.getByRole('button', { name: 'Older findings' }).count()).toBe(0);

    // a row's summary opens its run with the finding selected
    const first = findings[0]!;
    await page.locator(`tr[data-finding="${first.id}"] td:nth-child(4) a`).click();
    await eventually(() =>
      expect(decodeURIComponent(page.url())).toContain(`#/runs/${first.runId}?finding=${first.id}`),
    );

    // the link every channel sends: #/findings/<id> lands on the run, the redirect replaced
    const target = lost[0]!;
    await page.goto(`${rotscope.url}/#/coverage`);
    await page.goto(`${rotscope.url}/#/findings/${target.id}`);
    await eventually(() =>
      expect(decodeURIComponent(page.url())).toContain(
        `#/runs/${target.runId}?finding=${target.id}`,
      ),
    );
    await page.goBack();
    await eventually(() => expect(page.url()).toContain('#/coverage'));

    await page.goto(`${rotscope.url}/#/findings/999999`);
    await page.getByRole('alert').getByText('no finding "999999"').waitFor();
    expect(problems.filter((p) => /Content Security Policy/i.test(p))).toEqual([]);
    await context.close();
  });

  it('conversations: calls, fullest call, models, sub-agents and side calls, findings, runs; search by id', async () => {
    const { page, context } = await openConsole(browser, `${rotscope.url}/#/conversations`);
    const row = (id: string) => page.locator(`tr[data-conversation="${id}"]`);
    await row(TOOLS_SESSION).waitFor();
    expect(await rowIds(page, 'data-conversation')).toEqual(
      expect.arrayContaining(['history-lost', 'context-critical', 'healthy', FINDING_SESSION]),
    );
    await row(TOOLS_SESSION).getByText('1 sub-agent').waitFor();
    // The agent that ran it, by name: a Claude Code session says so beside its UUID; a library's
    // conversation names its producer convention.
    expect(await row(TOOLS_SESSION).locator('.conversation-agent').textContent()).toMatch(
      /^Claude Code( \d+\.\d+\.\d+)?$/,
    );
    expect(await row('healthy').locator('.conversation-agent').textContent()).not.toMatch(
      /Claude Code/,
    );
    expect(
      await row(FINDING_SESSION)
        .getByText(/side call/)
        .count(),
    ).toBe(1);
    // 115,000 of gpt-4o's 128,000: 90%, red as the status line
    const fullest = row('context-critical').locator('.fullness');
    expect(await fullest.textContent()).toBe('90%');
    expect(await fullest.getAttribute('class')).toContain('usage-red');
    expect(await row('healthy').locator('td').nth(4).textContent()).toBe('gpt-4o');
    expect(await row('history-lost').locator('td').nth(6).textContent()).toBe('1');
    await screenshot(page, 'conversations');

    await page.getByLabel('Search by id').fill('history');
    await page.getByLabel('Search by id').press('Enter');
    await eventually(async () =>
      expect(await rowIds(page, 'data-conversation')).toEqual(['history-lost']),
    );
    await page.getByLabel('Search by id').fill('no-such-conversation');
    await page.getByLabel('Search by id').press('Enter');
    await page.getByText('No conversation, run or trace id or project contains').waitFor();

    // a conversation: its streams (the sub-agent named) and its runs, each opening the run view
    await page.goto(`${rotscope.url}/#/conversations/${TOOLS_SESSION}`);
    await page.locator('.streams-table').getByText(SUBAGENT_ID).waitFor();
    await page.locator('.runs-table a').first().click();
    await eventually(() => expect(page.url()).toContain(`#/runs/${TOOLS_SESSION}`));
    await context.close();
  });

  it('coverage: tells a blind detector from a quiet one and says what to send', async () => {
    const { page, context } = await openConsole(browser, `${rotscope.url}/#/coverage`);
    const cutOff = page.locator('tr[data-detector="output_cut_off"]');
    await cutOff.waitFor();
    // the gpt-4o spans carry no finish reason: output_cut_off misses them, and says why
    expect(await cutOff.locator('.sight').textContent()).toBe('partly blind');
    expect(await cutOff.locator('td.hint').textContent()).toContain(
      'send gen_ai.response.finish_reasons',
    );
    const producer = await get<{
      producers: Array<{ producer: string; blind: string[] }>;
    }>('/api/coverage');
    const blindProducer = producer.producers.find((p) => p.blind.includes('output_cut_off'));
    expect(blindProducer).toBeDefined();
    await page
      .locator(`tr[data-producer="${blindProducer!.producer}"]`)
      .getByText(/blind: .*Output cut off/)
      .waitFor();
    // Claude Code's row names the agent, and what it misses is said in Claude Code's knobs
    const claudeRow = page.locator('tr[data-producer="claude_code"]');
    await claudeRow.getByText('Claude Code', { exact: true }).waitFor();
    for (const hint of await claudeRow.locator('.producer-hint').allTextContents()) {
      expect(hint).toContain('rotscope claude-code install');
      expect(hint).not.toContain('@rotscope/sdk');
    }
    expect(await page.locator('tr[data-detector="tool_takeover"] td.hint').textContent()).toContain(
      'recordContextSizes',
    );
    // each model with the window its calls are judged on and where it came from (issue 19 §3)
    const gpt = page.locator('.coverage-models tr[data-model="gpt-4o"]');
    await gpt.waitFor();
    expect(await gpt.locator('td').allTextContents()).toEqual([
      'gpt-4o',
      '128.0k',
      'catalog',
      expect.any(String),
    ]);
    const claude = page.locator(`.coverage-models tr[data-model="${CLAUDE_MODEL}"]`);
    expect((await claude.locator('td').allTextContents()).slice(1, 3)).toEqual([
      '200.0k',
      'catalog',
    ]);
    // every model here has a window: nothing says a model goes unjudged
    expect(await page.locator('.models-without-window').count()).toBe(0);
    await screenshot(page, 'coverage');
    await context.close();
  });

  it('channels: a webhook created shows its secret once, test-sends, and shows the deliveries of the findings it gets', async () => {
    const { page, context } = await openConsole(browser, `${rotscope.url}/#/channels`);
    const form = page.getByRole('form', { name: 'New channel' });
    await form.getByLabel('Name').fill('on-call hook');
    await form.getByLabel('URL').fill(`${receiver.url}/hook`);
    await form.getByRole('button', { name: 'Create channel' }).click();
    const secret =
      (await page.getByLabel('the signing secret, shown once', { exact: true }).textContent()) ??
      '';
    expect(secret).toMatch(/^whsec_/);
    const card = page.getByRole('article', { name: 'Channel on-call hook' });
    await card.waitFor();

    await card.getByRole('button', { name: 'Test send' }).click();
    const result = card.getByLabel('test send result');
    await result.getByText(/delivered · status 200/).waitFor();
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0]!.path).toBe('/hook');
    expect(receiver.requests[0]!.headers['webhook-signature']).toMatch(/^v1,/);

    // the secret is never shown again: not after a reload, not by the API
    await page.reload();
    await card.waitFor();
    expect(await page.locator('body').textContent()).not.toContain(secret);
    const channels = await get<{ items: Array<{ id: string; name: string }> }>('/api/channels');
    expect(JSON.stringify(channels)).not.toContain(secret);
    const channelId = channels.items.find((c) => c.name === 'on-call hook')!.id;

    // attached to the alert, the next finding is delivered and listed with its attempt
    const put = await fetch(`${rotscope.url}/api/alerts/context-rot`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ channels: [{ id: channelId, minSeverity: 'info' }] }),
    });
    expect(put.status).toBe(200);
    await sendConversations(rotscope.url, { 'lost-again': [60_000, 15_000] });
    await receiver.waitFor(2, 60_000);
    await eventually(
      async () => {
        await card.getByRole('button', { name: 'Refresh' }).click();
        await card.locator('tr[data-delivery]').first().waitFor({ timeout: 2_000 });
      },
      { timeout: 30_000, interval: 500 },
    );
    const delivery = card.locator('tr[data-delivery]').first();
    expect(await delivery.locator('td').nth(2).textContent()).toBe('delivered');
    expect(await delivery.locator('ol.attempts li').first().textContent()).toMatch(
      /delivered · 200 · \d+ ms/,
    );
    await screenshot(page, 'channels');
    await context.close();
  });

  describe('tokens', () => {
    let admin: string;

    beforeAll(async () => {
      admin = await rotscope.createToken('admin');
      await eventually(
        async () => expect((await fetch(`${rotscope.url}/api/findings`)).status).toBe(401),
        { timeout: 20_000, interval: 200 },
      );
    });

    const signIn = async (token: string) => {
      const opened = await openConsole(browser, `${rotscope.url}/`);
      await opened.page.getByLabel('API token').fill(token);
      await opened.page.getByRole('button', { name: 'Sign in' }).click();
      return opened;
    };

    it('creates a token shown once, lists it by name, scope and workspace, revokes it; a read token reaches no admin page or action', async () => {
      const { page, context } = await signIn(admin);
      await page.locator('header nav').getByRole('link', { name: 'Tokens', exact: true }).click();
      const form = page.getByRole('form', { name: 'New token' });
      await form.getByLabel('Name').fill('grafana reader');
      await form.getByLabel('Scope').selectOption('read');
      await form.getByRole('button', { name: 'Create token' }).click();
      const read =
        (await page.getByLabel('the new token, shown once', { exact: true }).textContent()) ?? '';
      expect(read).toMatch(/^rs_read_/);
      const row = page.locator('tr', { hasText: 'grafana reader' });
      await row.waitFor();
      expect(await row.locator('td').nth(1).textContent()).toBe('read');
      expect(await row.locator('td').nth(2).textContent()).toBe('default');
      expect(await row.locator('td').nth(3).textContent()).toBe(`${read.slice(0, 12)}…`);
      await screenshot(page, 'tokens');
      await page.reload();
      await row.waitFor();
      expect(await page.locator('body').textContent()).not.toContain(read);

      // the read token: no admin page, no admin action
      const reader = await signIn(read);
      await reader.page
        .locator('header nav')
        .getByRole('link', { name: 'Findings', exact: true })
        .waitFor();
      expect(
        await reader.page
          .locator('header nav')
          .getByRole('link', { name: 'Tokens', exact: true })
          .count(),
      ).toBe(0);
      expect(
        await reader.page
          .locator('header nav')
          .getByRole('link', { name: 'Channels', exact: true })
          .count(),
      ).toBe(0);
      for (const section of ['tokens', 'channels', 'alert']) {
        await reader.page.goto(`${rotscope.url}/#/${section}`);
        await reader.page.getByRole('alert').getByText('needs an admin token').waitFor();
      }
      const statuses = await reader.page.evaluate(async () => {
        const session = (await (await fetch('/api/session')).json()) as { csrfToken: string };
        const headers = { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken };
        const list = await fetch('/api/tokens');
        const revoke = await fetch('/api/tokens/1/revoke', { method: 'POST', headers });
        const channel = await fetch('/api/channels', {
          method: 'POST',
          headers,
          body: JSON.stringify({
            type: 'webhook',
            name: 'x',
            config: { url: 'https://example.com/x' },
          }),
        });
        return [list.status, revoke.status, channel.status];
      });
      expect(statuses).toEqual([403, 403, 403]);
      await reader.context.close();

      // revoked by the admin: gone from the list, and it no longer signs in
      page.once('dialog', (dialog) => void dialog.accept());
      await row.getByRole('button', { name: /^Revoke/ }).click();
      await eventually(async () => expect(await row.count()).toBe(0));
      await eventually(
        async () => {
          const again = await signIn(read);
          try {
            await again.page
              .getByRole('alert')
              .getByText('unknown or revoked token')
              .waitFor({ timeout: 2_000 });
          } finally {
            await again.context.close();
          }
        },
        { timeout: 30_000, interval: 1_000 },
      );
      await page.getByLabel('Show revoked tokens').check();
      await page.locator('tr.revoked', { hasText: 'grafana reader' }).waitFor();
      await context.close();
    });
  });
});
