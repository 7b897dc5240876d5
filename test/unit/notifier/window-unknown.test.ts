/**
 * The `window.unknown` notice as each channel says it (issue 34 §2): the webhook body as JSON,
 * Slack's Block Kit message and the email's subject, text and HTML, each with the model, the calls
 * not judged, the setting that fixes it and a link to Coverage.
 */
import { describe, expect, it } from 'vitest';
import { formatEmail } from '../../../src/notifier/email.ts';
import { buildWindowUnknownPayload } from '../../../src/notifier/payload.ts';
import { formatSlack } from '../../../src/notifier/slack.ts';
import { formatWebhook } from '../../../src/notifier/webhook.ts';

const payload = buildWindowUnknownPayload(
  {
    id: '7',
    workspace: 'default',
    model: 'claude-x<1>',
    calls: 1_234,
    conversations: 2,
    conversationId: 'conv-9',
    createdAt: '2026-01-01T00:00:00.000Z',
  },
  'default',
  { publicUrl: 'https://rotscope.example.com/', host: '127.0.0.1', port: 4318 },
);

describe('the window.unknown notice', () => {
  it('names the model, the calls not judged and the setting, and links to Coverage', () => {
    expect(payload.type).toBe('window.unknown');
    expect(payload.timestamp).toBe('2026-01-01T00:00:00.000Z');
    expect(payload.data.url).toBe('https://rotscope.example.com/#/coverage');
    expect(payload.data.summary).toBe(
      'No window known for claude-x<1>: 1,234 calls not judged for context too full. What to do: ' +
        'Set a window override: on the Context rot alert page of the console (Window overrides), ' +
        'or PUT /api/alerts/context-rot with "windowOverrides": [{ "model": "claude-x<1>", ' +
        '"window": <tokens> }] (the list replaces the current overrides: send them too).',
    );
  });

  it('is the webhook body as it is', () => {
    const request = formatWebhook(
      { type: 'webhook', url: 'https://hooks.example.com/x', secret: 'whsec_AAAA', headers: {} },
      payload,
      'msg_1',
      new Date('2026-01-01T00:00:01Z'),
    );
    expect(JSON.parse(request.body)).toEqual(payload);
    expect(request.headers['webhook-id']).toBe('msg_1');
  });

  it('is a Slack message with the advice on a line of its own and an Open Coverage button', () => {
    const message = formatSlack(payload);
    expect(message.text).toBe(payload.data.summary);
    const text = JSON.stringify(message.blocks);
    expect(text).toContain('No window known for claude-x&lt;1&gt;');
    expect(text).toContain('*What to do:* Set a window override');
    expect(text).toContain('*Calls not judged*\\n1,234');
    expect(message.blocks.at(-1)).toMatchObject({
      type: 'actions',
      elements: [{ text: { text: 'Open Coverage' }, url: payload.data.url }],
    });
  });

  it('is an email with the model in the subject, the setting and the link', () => {
    const email = formatEmail(payload);
    expect(email.subject).toBe('[rotscope] No window known for claude-x<1>');
    expect(email.text).toContain('What to do: Set a window override');
    expect(email.text).toContain('Calls not judged: 1,234');
    expect(email.text).toContain(
      'Open Coverage in rotscope: https://rotscope.example.com/#/coverage',
    );
    expect(email.html).toContain('<h2>No window known for claude-x&lt;1&gt;</h2>');
    expect(email.html).not.toContain('claude-x<1>');
  });
});
