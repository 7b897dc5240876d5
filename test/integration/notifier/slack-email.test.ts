import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendTest, startNotifier } from '../../../src/notifier/notifier.ts';
import { createTestStore, type TestStore } from '../../helpers/store.ts';
import { startHttpReceiver, type HttpReceiver } from '../../helpers/http-receiver.ts';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp.ts';
import {
  addChannel,
  deliveriesOf,
  eventually,
  FAST,
  memoryLogger,
  queueFinding,
  testConfig,
} from './fixtures.ts';

type Block = {
  type: string;
  text?: { type: string; text: string };
  fields?: unknown[];
  elements?: unknown[];
};

describe('slack channel', () => {
  let store: TestStore;
  let slack: HttpReceiver;

  beforeAll(async () => {
    store = await createTestStore();
    // Stands in for hooks.slack.com, which answers 200 "ok" to a valid incoming-webhook post.
    slack = await startHttpReceiver(() => ({
      status: 200,
      headers: { 'content-type': 'text/plain' },
      body: 'ok',
    }));
  }, 180_000);
  afterAll(async () => {
    await slack.close();
    await store.close();
  });

  it('posts a Block Kit message with severity, detector, headline numbers, model and a link', async () => {
    const channelId = await addChannel(store.db, {
      type: 'slack',
      webhookUrl: `${slack.url}/services/T000/B000/XXXX`,
    });
    const findingId = await queueFinding(store.db, [channelId], { severity: 'critical' });
    const notifier = startNotifier({ store, config: testConfig(), log: memoryLogger(), ...FAST });
    try {
      const [request] = await slack.waitFor(1);
      await eventually(
        async () => (await deliveriesOf(store.db, findingId))[0]?.status === 'delivered',
      );
      expect(request?.path).toBe('/services/T000/B000/XXXX');
      expect(request?.headers['content-type']).toBe('application/json');
      const message = JSON.parse(request?.body ?? '{}') as { text: string; blocks: Block[] };

      // Slack's documented shape: a top-level text fallback and an array of layout blocks.
      expect(message.text).toContain('critical');
      expect(message.text).toContain('Context too full');
      expect(message.blocks.length).toBeLessThanOrEqual(50);
      expect(message.blocks.map((block) => block.type)).toEqual([
        'section',
        'section',
        'context',
        'actions',
      ]);
      for (const block of message.blocks) {
        expect(['section', 'context', 'actions', 'header', 'divider']).toContain(block.type);
      }
      const [headline, numbers, context, actions] = message.blocks as [Block, Block, Block, Block];
      expect(headline.text?.type).toBe('mrkdwn');
      expect(headline.text?.text).toContain('Critical');
      expect(headline.text?.text).toContain('Context too full');
      expect(headline.text?.text.length).toBeLessThanOrEqual(3000);

      const fields = numbers.fields as Array<{ type: string; text: string }>;
      expect(fields.length).toBeLessThanOrEqual(10);
      for (const field of fields) {
        expect(field.type).toBe('mrkdwn');
        expect(field.text.length).toBeLessThanOrEqual(2000);
      }
      const fieldText = fields.map((field) => field.text).join('\n');
      expect(fieldText).toContain('*Severity*\nCritical');
      expect(fieldText).toContain('*Detector*\nContext too full');
      expect(fieldText).toContain('*Model*\nclaude-sonnet-4-5');
      expect(fieldText).toContain('*Usage*\n152,000');
      expect(fieldText).toContain('*Window*\n200,000');

      const contextElements = context.elements as Array<{ type: string; text: string }>;
      expect(contextElements[0]?.type).toBe('mrkdwn');
      expect(contextElements[0]?.text).toContain('default');

      const [button] = actions.elements as Array<{
        type: string;
        text: { type: string; text: string };
        url: string;
        action_id: string;
      }>;
      expect(button).toMatchObject({
        type: 'button',
        text: { type: 'plain_text' },
        url: `https://rotscope.example.com/#/findings/${findingId}`,
      });
      expect(button?.action_id).toMatch(/^[\w-]{1,255}$/);
    } finally {
      await notifier.stop();
    }
  });

  it('reports a revoked hook (Slack answers 404 no_service) as a permanent failure', async () => {
    const gone = await startHttpReceiver(() => ({ status: 404, body: 'no_service' }));
    try {
      const channelId = await addChannel(store.db, {
        type: 'slack',
        webhookUrl: `${gone.url}/services/x`,
      });
      const result = await sendTest(store.db, 'default', channelId, testConfig());
      expect(result).toMatchObject({
        found: true,
        result: { status: 'permanent', code: 404, error: 'HTTP 404: no_service' },
      });
    } finally {
      await gone.close();
    }
  });
});

describe('email channel', () => {
  let store: TestStore;
  let smtp: SmtpSink;

  beforeAll(async () => {
    store = await createTestStore();
    smtp = await startSmtpSink({ user: 'rotscope', password: 's3cret' });
  }, 180_000);
  afterAll(async () => {
    await smtp.close();
    await store.close();
  });

  it('sends a message with subject, recipients, a plain-text and an HTML part over SMTP with auth', async () => {
    const channelId = await addChannel(store.db, {
      type: 'email',
      host: smtp.host,
      port: smtp.port,
      secure: false,
      user: 'rotscope',
      password: 's3cret',
      from: 'rotscope@example.com',
      to: ['oncall@example.com', 'team@example.com'],
    });
    const findingId = await queueFinding(store.db, [channelId]);
    const notifier = startNotifier({ store, config: testConfig(), log: memoryLogger(), ...FAST });
    try {
      const [mail] = await smtp.waitFor(1);
      await eventually(
        async () => (await deliveriesOf(store.db, findingId))[0]?.status === 'delivered',
      );
      expect(mail?.user).toBe('rotscope');
      expect(mail?.rcptTo).toEqual(['oncall@example.com', 'team@example.com']);
      expect(mail?.mailFrom).toBe('rotscope@example.com');
      const parsed = mail!.parsed;
      expect(parsed.subject).toBe(
        '[rotscope] Warning: Context too full - Context 152,000 of 200,000 tokens (76%) in claude-sonnet-4-5',
      );
      const to = Array.isArray(parsed.to) ? parsed.to : [parsed.to];
      expect(to.flatMap((address) => address?.value.map((entry) => entry.address))).toEqual([
        'oncall@example.com',
        'team@example.com',
      ]);
      expect(parsed.text).toContain('Context 152,000 of 200,000 tokens (76%)');
      expect(parsed.text).toContain('Model: claude-sonnet-4-5');
      expect(parsed.text).toContain(`https://rotscope.example.com/#/findings/${findingId}`);
      expect(parsed.html).toBeTruthy();
      expect(parsed.html).toContain('<table');
      expect(parsed.html).toContain(`href="https://rotscope.example.com/#/findings/${findingId}"`);
      expect(parsed.html).toContain('claude-sonnet-4-5');
      const [delivery] = await deliveriesOf(store.db, findingId);
      expect(delivery?.attemptLog[0]).toMatchObject({ status_code: 250, outcome: 'delivered' });
    } finally {
      await notifier.stop();
    }
  });

  it('treats a rejected login as permanent', async () => {
    const channelId = await addChannel(store.db, {
      type: 'email',
      host: smtp.host,
      port: smtp.port,
      secure: false,
      user: 'rotscope',
      password: 'wrong',
      from: 'rotscope@example.com',
      to: ['oncall@example.com'],
    });
    const result = await sendTest(store.db, 'default', channelId, testConfig());
    expect(result).toMatchObject({ found: true, result: { status: 'permanent', code: 535 } });
  });
});
