/** Channels and deliveries as the API returns them. */
export type ChannelType = 'webhook' | 'slack' | 'email';

export interface Channel {
  id: string;
  type: ChannelType;
  name: string;
  /** Public configuration only: secrets are write-only. */
  config: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface CreatedChannel extends Channel {
  /** Webhooks: the signing secret, shown once. */
  secret?: string;
}

export interface TestResult {
  ok: boolean;
  status: 'ok' | 'retry' | 'permanent';
  code?: number;
  error?: string;
  retryAfterMs?: number;
  messageId: string;
  durationMs: number;
}

export interface Attempt {
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  outcome: string;
}

export interface Delivery {
  id: string;
  findingId: string;
  channelId: string;
  event: string;
  status: 'pending' | 'delivered' | 'failed' | 'dead';
  attemptCount: number;
  nextAttemptAt: string | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  deliveredAt: string | null;
  attempts: Attempt[];
}

/** The destination a channel sends to, from its public configuration. */
export function destinationOf(channel: Channel): string {
  const c = channel.config;
  if (channel.type === 'webhook') return String(c.url ?? '');
  if (channel.type === 'slack') return `Slack (${String(c.webhookHost ?? 'hooks.slack.com')})`;
  const to = Array.isArray(c.to) ? c.to.join(', ') : '';
  return `${to} via ${String(c.host ?? '')}:${String(c.port ?? '')}`;
}
