/**
 * Webhook channel: POSTs the payload as JSON, signed as Standard Webhooks specifies
 * (https://www.standardwebhooks.com): `webhook-id` (the delivery id, stable across retries
 * so receivers can de-duplicate), `webhook-timestamp` (seconds, fresh per attempt) and
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed by the decoded
 * `whsec_` secret. Formats and sends; the delivery loop decides about retries.
 */
import { createHmac } from 'node:crypto';
import type { WebhookSettings } from './config.ts';
import { postJson, type Resolver } from './outbound.ts';
import type { ChannelPayload } from './payload.ts';
import { classifyHttp, type SendResult } from './policy.ts';

/** The signature header value for a message: `v1,<base64>`. */
export function signWebhook(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  const key = Buffer.from(
    secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret,
    'base64',
  );
  const digest = createHmac('sha256', key)
    .update(`${id}.${timestampSeconds}.${body}`)
    .digest('base64');
  return `v1,${digest}`;
}

/** The request a webhook delivery makes: signed headers (custom ones first) and the body. */
export function formatWebhook(
  settings: WebhookSettings,
  payload: ChannelPayload,
  messageId: string,
  now: Date,
): { headers: Record<string, string>; body: string } {
  const body = JSON.stringify(payload);
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    body,
    headers: {
      ...settings.headers,
      'content-type': 'application/json',
      'webhook-id': messageId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(settings.secret, messageId, timestamp, body),
    },
  };
}

export interface SendContext {
  /** Aborts the send (the per-send timeout). */
  signal: AbortSignal;
  /** Allow private, loopback and link-local destinations. */
  allowPrivate: boolean;
  /** Resolves destination host names. Default: the system resolver. */
  resolve?: Resolver;
  now: () => Date;
}

/** Sends one webhook message. Never throws for expected failures. */
export async function sendWebhook(
  settings: WebhookSettings,
  payload: ChannelPayload,
  messageId: string,
  context: SendContext,
): Promise<SendResult> {
  const request = formatWebhook(settings, payload, messageId, context.now());
  const outcome = await postJson(settings.url, {
    body: request.body,
    headers: request.headers,
    signal: context.signal,
    allowPrivate: context.allowPrivate,
    ...(context.resolve ? { resolve: context.resolve } : {}),
  });
  return classifyHttp(outcome, context.now().getTime());
}
