/**
 * The pure parts: retry policy, SMTP error classes, configuration parsing (address checks:
 * addresses.test.ts).
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  fromStored,
  generateWebhookSecret,
  isValidWebhookSecret,
  parseNewChannelConfig,
  patchChannelConfig,
  toStored,
} from '../../../src/notifier/config.ts';
import { decide } from '../../../src/notifier/notifier.ts';
import { classifySmtpError, formatEmail } from '../../../src/notifier/email.ts';
import { formatSlack } from '../../../src/notifier/slack.ts';
import { backoffMs, classifyHttp, parseRetryAfter } from '../../../src/notifier/policy.ts';
import { formatWebhook } from '../../../src/notifier/webhook.ts';
import { testPayload } from '../../../src/notifier/payload.ts';
import { defaultConfig } from '../../../src/config.ts';

const NOW = Date.parse('2026-01-01T00:00:00Z');

/** Where the payload's finding links point. */
const consoleConfig = defaultConfig({ publicUrl: 'https://rotscope.example.com' });

describe('Retry-After', () => {
  it.each([
    ['2', 2_000],
    [' 120 ', 120_000],
    ['0', 0],
    ['Thu, 01 Jan 2026 00:00:05 GMT', 5_000],
    ['Wed, 31 Dec 2025 23:00:00 GMT', 0],
    ['soon', undefined],
    ['', undefined],
    ['-1', undefined],
  ])('%j → %s ms', (value, expected) => {
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });
  it('reads the first of repeated headers and nothing from none', () => {
    expect(parseRetryAfter(['3', '9'], NOW)).toBe(3_000);
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
  });
});

describe('backoff', () => {
  const options = { initialMs: 1_000, maxMs: 60_000 };
  it('doubles per attempt with equal jitter, capped', () => {
    expect(backoffMs(1, options, 0)).toBe(500);
    expect(backoffMs(1, options, 0.999_999)).toBe(1_000);
    expect(backoffMs(3, options, 0)).toBe(2_000);
    expect(backoffMs(3, options, 0.5)).toBe(3_000);
    expect(backoffMs(30, options, 0.999_999)).toBe(60_000);
    expect(backoffMs(30, options, 0)).toBe(30_000);
  });
  it('never retries sooner than Retry-After', () => {
    expect(backoffMs(1, options, 0, 2_000)).toBe(2_000);
    expect(backoffMs(5, options, 0, 2_000)).toBe(8_000);
  });
  it('gives up when the next try would pass the give-up time', () => {
    const policy = { giveUpMs: 10_000, backoff: options, random: 0 };
    expect(decide({ status: 'ok', code: 200 }, { attempt: 1, ageMs: 0 }, 5, policy)).toEqual({
      outcome: 'delivered',
    });
    expect(
      decide({ status: 'permanent', code: 400, error: 'x' }, { attempt: 1, ageMs: 0 }, 5, policy),
    ).toEqual({
      outcome: 'failed',
    });
    expect(decide({ status: 'retry', error: 'x' }, { attempt: 1, ageMs: 0 }, 5, policy)).toEqual({
      outcome: 'retry',
      retryInMs: 500,
    });
    expect(
      decide(
        { status: 'retry', error: 'x', afterMs: 9_000 },
        { attempt: 1, ageMs: 2_000 },
        5,
        policy,
      ),
    ).toEqual({
      outcome: 'dead',
    });
    expect(
      decide({ status: 'retry', error: 'x' }, { attempt: 4, ageMs: 6_100 }, 0, policy),
    ).toEqual({
      outcome: 'dead',
    });
  });
});

describe('HTTP outcomes', () => {
  const response = (status: number, headers: Record<string, string> = {}, body = '') =>
    classifyHttp({ kind: 'response', status, headers, body, truncated: false }, NOW);
  it.each([
    [200, 'ok'],
    [204, 'ok'],
    [301, 'permanent'],
    [302, 'permanent'],
    [400, 'permanent'],
    [401, 'permanent'],
    [403, 'permanent'],
    [404, 'permanent'],
    [408, 'retry'],
    [409, 'permanent'],
    [410, 'permanent'],
    [413, 'permanent'],
    [429, 'retry'],
    [500, 'retry'],
    [502, 'retry'],
    [503, 'retry'],
    [504, 'retry'],
  ])('HTTP %i is %s', (status, expected) => {
    expect(response(status).status).toBe(expected);
  });
  it('carries Retry-After and a one-line body excerpt', () => {
    expect(response(429, { 'retry-after': '7' }, 'slow\n down')).toEqual({
      status: 'retry',
      code: 429,
      afterMs: 7_000,
      error: 'HTTP 429: slow down',
    });
    expect((response(500, {}, 'x'.repeat(1000)) as { error: string }).error.length).toBeLessThan(
      230,
    );
  });
  it('retries network trouble and timeouts, not refusals', () => {
    expect(classifyHttp({ kind: 'network', error: 'ECONNREFUSED' }, NOW).status).toBe('retry');
    expect(classifyHttp({ kind: 'timeout', error: 'timed out' }, NOW).status).toBe('retry');
    expect(classifyHttp({ kind: 'blocked', error: 'nope' }, NOW)).toEqual({
      status: 'permanent',
      error: 'refused: nope',
    });
    expect(classifyHttp({ kind: 'invalid_url', error: 'bad' }, NOW).status).toBe('permanent');
  });
});

describe('SMTP errors', () => {
  it.each([
    [{ responseCode: 421, code: 'EENVELOPE' }, 'retry'],
    [{ responseCode: 450 }, 'retry'],
    [{ responseCode: 550, code: 'EENVELOPE' }, 'permanent'],
    [{ responseCode: 535, code: 'EAUTH' }, 'permanent'],
    [{ code: 'EAUTH' }, 'permanent'],
    [{ code: 'ECONNECTION' }, 'retry'],
    [{ code: 'ETIMEDOUT' }, 'retry'],
    [{ code: 'ETLS' }, 'permanent'],
  ])('%j is %s', (error, expected) => {
    expect(classifySmtpError(Object.assign(new Error('smtp'), error)).status).toBe(expected);
  });
});

describe('channel configuration', () => {
  it('generates and validates Standard Webhooks secrets', () => {
    const secret = generateWebhookSecret();
    expect(isValidWebhookSecret(secret)).toBe(true);
    expect(isValidWebhookSecret('whsec_' + Buffer.alloc(8).toString('base64'))).toBe(false);
    expect(isValidWebhookSecret(secret.slice(6))).toBe(false);
    expect(isValidWebhookSecret('whsec_not base64!')).toBe(false);
  });

  it('splits secrets from public configuration and rebuilds the settings', () => {
    const parsed = parseNewChannelConfig('email', {
      host: 'smtp.example.com',
      port: 587,
      secure: false,
      user: 'bot',
      password: 'pw',
      from: 'a@example.com',
      to: ['b@example.com'],
    });
    if (!parsed.ok) throw new Error(parsed.error);
    const stored = toStored(parsed.value.settings);
    expect(stored.secrets).toEqual({ password: 'pw' });
    expect(JSON.stringify(stored.config)).not.toContain('pw"');
    expect(fromStored('email', stored)).toEqual({ ok: true, value: parsed.value.settings });
    expect(fromStored('email', { config: stored.config, secrets: {} })).toMatchObject({ ok: true });
    expect(fromStored('webhook', { config: { url: 'https://e.com' }, secrets: {} })).toMatchObject({
      ok: false,
    });
    expect(fromStored('fax', stored)).toEqual({ ok: false, error: 'unknown channel type fax' });
  });

  it('patches keep the secret and can drop optional keys', () => {
    const created = parseNewChannelConfig('webhook', {
      url: 'https://e.com',
      headers: { 'X-A': '1' },
    });
    if (!created.ok) throw new Error(created.error);
    const patched = patchChannelConfig(created.value.settings, {
      headers: null,
      url: 'https://f.com',
    });
    expect(patched).toEqual({
      ok: true,
      value: {
        type: 'webhook',
        url: 'https://f.com',
        secret: created.value.revealedSecret,
        headers: {},
      },
    });
    expect(patchChannelConfig(created.value.settings, [1])).toEqual({
      ok: false,
      error: 'Channel settings must be an object',
    });
  });

  it('signs exactly as the standardwebhooks library does', () => {
    const secret = generateWebhookSecret();
    const now = new Date();
    const { body, headers } = formatWebhook(
      { type: 'webhook', url: 'https://e.com', secret, headers: { 'X-A': '1' } },
      testPayload('default', consoleConfig, now),
      'msg_1',
      now,
    );
    expect(headers['webhook-signature']).toBe(new Webhook(secret).sign('msg_1', now, body));
    expect(headers['X-A']).toBe('1');
  });
});

describe('human-readable formats', () => {
  const payload = () => {
    const base = testPayload('default', consoleConfig, new Date('2026-01-01T00:00:00Z'));
    return {
      ...base,
      type: 'finding.created' as const,
      data: {
        ...base.data,
        summary: `<b>&tool</b> ${'y'.repeat(5000)}`,
        details: {
          toolName: 'read_file',
          toolShare: 0.42,
          tokensLost: 12_345,
          nested: { a: 1 },
          broken: Number.NaN,
        },
      },
    };
  };

  it('escapes and clips Slack text, turning details into labelled fields', () => {
    const message = formatSlack(payload());
    const section = message.blocks[0] as { text: { text: string } };
    expect(section.text.text).toContain('&lt;b&gt;&amp;tool&lt;/b&gt;');
    expect(section.text.text.length).toBeLessThanOrEqual(3000);
    expect(message.text.length).toBeLessThanOrEqual(3000);
    const fields = (message.blocks[1] as { fields: Array<{ text: string }> }).fields.map(
      (f) => f.text,
    );
    expect(fields).toContain('*Tool name*\nread_file');
    expect(fields).toContain('*Tool share*\n42.0%');
    expect(fields).toContain('*Tokens lost*\n12,345');
    expect(fields.join()).not.toContain('Nested');
    expect(fields.join()).not.toContain('Broken');
  });

  it('escapes HTML in email and keeps the subject on one line', () => {
    const email = formatEmail({ ...payload(), data: { ...payload().data, summary: 'a\r\nb <i>' } });
    expect(email.subject).toBe('[rotscope] Warning: Context too full in test-project - a b <i>');
    expect(email.html).toContain('a\r\nb &lt;i&gt;');
    expect(email.html).not.toContain('<i>');
    expect(email.text).toContain('Tool share: 42.0%');
  });

  it('says when a finding is late, and only then', () => {
    const late = { ...payload(), data: { ...payload().data, summary: 'full', late: true } };
    const slack = formatSlack(late);
    expect(slack.text).toBe(
      '[warning] Context too full (late: judged again after a window or a call arrived later) in test-project: full',
    );
    expect((slack.blocks[0] as { text: { text: string } }).text.text).toContain(
      '*Warning · Context too full* (late: judged again after a window or a call arrived later)',
    );
    const email = formatEmail(late);
    expect(email.subject).toBe(
      '[rotscope] Warning: Context too full (late) in test-project - full',
    );
    expect(email.text).toContain('Late: judged again after a window or a call arrived later');
    expect(formatSlack(payload()).text).not.toContain('late');
    expect(formatEmail(payload()).text).not.toMatch(/late/i);
  });
});
