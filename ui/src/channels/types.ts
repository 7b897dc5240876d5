/** Channels and deliveries as the API returns them (the server's schema: ../api-types.ts). */
import type { Answer, Item } from '../api-types.ts';

export type ChannelList = Answer<'/api/channels'>;

/** A channel; `config` is its public configuration only: secrets are write-only. */
export type Channel = Item<ChannelList>;

export type ChannelType = Channel['type'];

/** `POST /api/channels`: a webhook's signing secret (`secret`) is shown this once. */
export type CreatedChannel = Answer<'/api/channels', 'post', 201>;

/** `POST /api/channels/:id/test`. */
export type TestResult = Answer<'/api/channels/{id}/test', 'post'>;

export type Delivery = Item<Answer<'/api/deliveries'>>;

export type Attempt = Delivery['attempts'][number];

/** The destination a channel sends to, from its public configuration. */
export function destinationOf(channel: Channel): string {
  const c = channel.config;
  if (channel.type === 'webhook') return String(c.url ?? '');
  if (channel.type === 'slack') return `Slack (${String(c.webhookHost ?? 'hooks.slack.com')})`;
  const to = Array.isArray(c.to) ? c.to.join(', ') : '';
  return `${to} via ${String(c.host ?? '')}:${String(c.port ?? '')}`;
}
