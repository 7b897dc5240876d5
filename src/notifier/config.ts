/**
 * Channel configuration: validation of what the API receives, the split into public
 * configuration and write-only secrets (as stored), and the typed settings senders use.
 *
 * Stored shapes (`channels.config` / `channels.secrets`, sealed by the store):
 * - webhook: `{ url, headerNames, allowPrivateAddress? }` / `{ secret, headers, url? }` (header values may carry
 *   credentials, so only their names are public; a URL with credentials or token-like parts
 *   is public only masked ({@link maskUrl}), the whole URL is a secret)
 * - slack: `{ webhookHost }` / `{ webhookUrl }` (the URL is the credential)
 * - email: `{ host, port, secure, user?, from, to, allowPrivateAddress? }` / `{ password? }`
 *
 * `allowPrivateAddress: true` (public, webhook and email) lets one channel reach private,
 * loopback and link-local destinations, which every other channel still may not: a local
 * receiver or SMTP relay, allowed by an admin without restarting the server
 * (`ROTSCOPE_ALLOW_PRIVATE_ADDRESSES` is the server-wide switch). Slack channels do not take it:
 * their URL is Slack's own ({@link SLACK_HOSTS}).
 *
 * Messages of refused configurations are written for the person filling the form ("Email
 * address 1 is not valid"), not as internal paths (see {@link describeIssue}).
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { describeIssue } from './field-labels.ts';

export type ChannelType = 'webhook' | 'slack' | 'email';

export const CHANNEL_TYPES: readonly ChannelType[] = ['webhook', 'slack', 'email'];

export interface WebhookSettings {
  type: 'webhook';
  url: string;
  /** An admin let this channel reach private, loopback and link-local addresses (default off). */
  allowPrivateAddress?: boolean;
  /** Standard Webhooks secret, `whsec_<base64>`. */
  secret: string;
  headers: Record<string, string>;
}

export interface SlackSettings {
  type: 'slack';
  /** Incoming-webhook URL (https://hooks.slack.com/services/...). */
  webhookUrl: string;
}

export interface EmailSettings {
  type: 'email';
  host: string;
  /** An admin let this channel reach a private or loopback SMTP server (default off). */
  allowPrivateAddress?: boolean;
  port: number;
  /** TLS from the start (port 465). When false, STARTTLS is used if the server offers it. */
  secure: boolean;
  user?: string;
  password?: string;
  from: string;
  to: string[];
}

/** Everything a sender needs, secrets included. Never leaves the server. */
export type ChannelSettings = WebhookSettings | SlackSettings | EmailSettings;

/** Whether an admin let this channel reach private addresses (`config.allowPrivateAddress`). */
export function allowsPrivateAddress(settings: ChannelSettings): boolean {
  return settings.type !== 'slack' && settings.allowPrivateAddress === true;
}

/** A channel's settings as stored: public configuration and secrets apart. */
export interface StoredChannelConfig {
  config: Record<string, unknown>;
  secrets: Record<string, unknown>;
}

/**
 * A configuration or a refusal: `error` is one sentence for the person who filled the form,
 * `path` (below `config`) the field it is about, when there is one.
 */
export type ConfigResult<T> =
  { ok: true; value: T } | { ok: false; error: string; path?: Array<string | number> };

/** Headers the webhook sender sets itself; custom headers may not override them. */
const RESERVED_HEADERS = new Set([
  'content-type',
  'content-length',
  'host',
  'connection',
  'transfer-encoding',
  'user-agent',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);

const httpUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL');

const whsecSecret = z
  .string()
  .refine(isValidWebhookSecret, 'must be whsec_ followed by 24 to 64 base64-encoded bytes');

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const headers = z
  .record(
    z.string(),
    z
      .string()
      .max(4096)
      .refine((value) => !/[\r\n\0]/.test(value), 'invalid header value'),
  )
  .superRefine((value, ctx) => {
    const names = Object.keys(value);
    if (names.length > 20) ctx.addIssue({ code: 'custom', message: 'at most 20 headers' });
    for (const name of names) {
      if (!HEADER_NAME.test(name))
        ctx.addIssue({ code: 'custom', message: 'invalid header name', path: [name] });
      else if (RESERVED_HEADERS.has(name.toLowerCase())) {
        ctx.addIssue({ code: 'custom', message: 'reserved header', path: [name] });
      }
    }
  });

const email = z.string().email().max(320);

const webhookInput = z.strictObject({
  url: httpUrl,
  secret: whsecSecret.optional(),
  headers: headers.optional(),
  allowPrivateAddress: z.boolean().optional(),
});

const slackInput = z.strictObject({ webhookUrl: httpUrl });

const emailInput = z.strictObject({
  host: z.string().min(1).max(255),
  port: z.number().int().min(1).max(65_535),
  secure: z.boolean(),
  user: z.string().min(1).max(320).optional(),
  password: z.string().max(1024).optional(),
  from: email,
  to: z.array(email).min(1).max(50),
  allowPrivateAddress: z.boolean().optional(),
});

/** Query parameter names that carry credentials (`?token=`, `?api_key=`, `?sig=`, ...). */
const SECRET_PARAM = /token|key|secret|sig|pass|pwd|auth|code|credential|session|jwt|hmac/i;
/** A value that looks like a token: 16+ URL-safe characters, letters and digits mixed. */
const TOKEN_LIKE = /^(?=.*[A-Za-z])(?=.*\d)[A-Za-z0-9._~+/=-]{16,}$/;

/**
 * A URL as the API shows it: user and password, the values of query parameters named like
 * credentials or that look like tokens, and token-like path segments (24+ characters, as in
 * `/webhooks/<id>/<token>`) become `***`. Unchanged when there is nothing to hide (or it
 * does not parse).
 */
export function maskUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return value;
  }
  let changed = false;
  if (url.username !== '' || url.password !== '') {
    if (url.username !== '') url.username = '***';
    if (url.password !== '') url.password = '***';
    changed = true;
  }
  const params = new URLSearchParams(url.search);
  for (const [name, param] of [...params.entries()]) {
    if (param !== '' && (SECRET_PARAM.test(name) || TOKEN_LIKE.test(param))) {
      params.set(name, '***');
      changed = true;
    }
  }
  if (changed) url.search = params.toString().replaceAll('%2A', '*');
  const segments = url.pathname.split('/');
  const masked = segments.map((segment) =>
    segment.length >= 24 && TOKEN_LIKE.test(segment) ? '***' : segment,
  );
  if (masked.some((segment, i) => segment !== segments[i])) {
    url.pathname = masked.join('/');
    changed = true;
  }
  return changed ? url.toString() : value;
}

/** Whether a string is a Standard Webhooks secret (`whsec_` + 24..64 bytes of base64). */
export function isValidWebhookSecret(secret: string): boolean {
  if (!secret.startsWith('whsec_')) return false;
  const encoded = secret.slice('whsec_'.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return false;
  const bytes = Buffer.from(encoded, 'base64').length;
  return bytes >= 24 && bytes <= 64;
}

/** A fresh signing secret: 32 random bytes, `whsec_<base64>`. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The first problem of a refused configuration, worded for a person (see field-labels.ts). */
function firstIssue(
  error: z.ZodError,
  input: unknown,
  type: ChannelType,
): { ok: false; error: string; path?: Array<string | number> } {
  const issue = error.issues[0];
  if (!issue) return { ok: false, error: 'Channel settings are not valid' };
  const path = issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key));
  return {
    ok: false,
    error: describeIssue(issue, input, type),
    ...(path.length > 0 ? { path } : {}),
  };
}

/** Hosts of Slack's incoming webhooks (commercial Slack and GovSlack). */
export const SLACK_HOSTS: readonly string[] = ['hooks.slack.com', 'hooks.slack-gov.com'];

/**
 * Whether a URL someone enters for a Slack channel is one of Slack's incoming webhooks
 * (`https://hooks.slack.com/...`). Checked where the URL is entered (create, and a change of
 * the URL), not on stored rows, so a channel saved by an earlier version keeps sending.
 */
export function checkSlackUrl(value: string): string | undefined {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url?.protocol === 'https:' && SLACK_HOSTS.includes(url.hostname.toLowerCase()))
    return undefined;
  return 'Slack webhook URL must be a Slack incoming webhook, https://hooks.slack.com/services/… (Slack: Apps → Incoming Webhooks); to post anywhere else, create a webhook channel';
}

function parseInput(type: ChannelType, input: unknown): ConfigResult<ChannelSettings> {
  switch (type) {
    case 'webhook': {
      const parsed = webhookInput.safeParse(input);
      if (!parsed.success) return firstIssue(parsed.error, input, type);
      return {
        ok: true,
        value: {
          type,
          url: parsed.data.url,
          secret: parsed.data.secret ?? '',
          headers: parsed.data.headers ?? {},
          ...(parsed.data.allowPrivateAddress ? { allowPrivateAddress: true } : {}),
        },
      };
    }
    case 'slack': {
      const parsed = slackInput.safeParse(input);
      if (!parsed.success) return firstIssue(parsed.error, input, type);
      return { ok: true, value: { type, webhookUrl: parsed.data.webhookUrl } };
    }
    case 'email': {
      const parsed = emailInput.safeParse(input);
      if (!parsed.success) return firstIssue(parsed.error, input, type);
      const { user, password, allowPrivateAddress, ...rest } = parsed.data;
      return {
        ok: true,
        value: {
          type,
          ...rest,
          ...(user !== undefined ? { user } : {}),
          ...(password !== undefined ? { password } : {}),
          ...(allowPrivateAddress ? { allowPrivateAddress: true } : {}),
        },
      };
    }
  }
}

/**
 * Validates a new channel's configuration (the `config` of `POST /api/channels`). A webhook
 * without a secret gets a generated one, returned as `revealedSecret` (shown once).
 */
export function parseNewChannelConfig(
  type: ChannelType,
  input: unknown,
): ConfigResult<{ settings: ChannelSettings; revealedSecret?: string }> {
  const parsed = parseInput(type, input);
  if (!parsed.ok) return parsed;
  const settings = parsed.value;
  if (settings.type === 'slack') {
    const refused = checkSlackUrl(settings.webhookUrl);
    if (refused) return { ok: false, error: refused, path: ['webhookUrl'] };
  }
  if (settings.type === 'webhook') {
    if (settings.secret === '') settings.secret = generateWebhookSecret();
    return { ok: true, value: { settings, revealedSecret: settings.secret } };
  }
  return { ok: true, value: { settings } };
}

/** The input form of current settings (what a create with these settings would send). */
function toInput(settings: ChannelSettings): Record<string, unknown> {
  const { type: _type, ...rest } = settings;
  return rest;
}

/**
 * Public configuration keys derived from the settings (see {@link toStored}): returned by the
 * API, read-only, ignored when sent back.
 */
const DERIVED_CONFIG_KEYS: Record<ChannelType, readonly string[]> = {
  webhook: ['headerNames'],
  slack: ['webhookHost'],
  email: [],
};

/**
 * Applies a partial configuration (`PATCH /api/channels/:id`) to current settings: given
 * keys replace current ones (`headers` as a whole), `null` removes an optional key
 * (`user`, `password`, `headers`), absent keys (secrets included) are kept, and the derived
 * keys the API returns (`headerNames`, `webhookHost`) are ignored, so the public
 * configuration GET returns is a valid patch.
 */
export function patchChannelConfig(
  current: ChannelSettings,
  patch: unknown,
): ConfigResult<ChannelSettings> {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    return { ok: false, error: 'Channel settings must be an object' };
  }
  const merged: Record<string, unknown> = toInput(current);
  for (const [key, value] of Object.entries(patch)) {
    if (DERIVED_CONFIG_KEYS[current.type].includes(key)) continue;
    // The masked URL GET returned, sent back unchanged, keeps the URL it stands for.
    if (key === 'url' && current.type === 'webhook' && value === maskUrl(current.url)) continue;
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  const parsed = parseInput(current.type, merged);
  if (!parsed.ok) return parsed;
  const settings = parsed.value;
  if (settings.type === 'slack' && current.type === 'slack') {
    const refused =
      settings.webhookUrl !== current.webhookUrl ? checkSlackUrl(settings.webhookUrl) : undefined;
    if (refused) return { ok: false, error: refused, path: ['webhookUrl'] };
  }
  if (settings.type === 'webhook' && settings.secret === '') {
    settings.secret = current.type === 'webhook' ? current.secret : generateWebhookSecret();
  }
  return { ok: true, value: settings };
}

/** Splits settings into the stored public configuration and secrets. */
export function toStored(settings: ChannelSettings): StoredChannelConfig {
  switch (settings.type) {
    case 'webhook': {
      const url = maskUrl(settings.url);
      return {
        config: {
          url,
          headerNames: Object.keys(settings.headers),
          ...(settings.allowPrivateAddress ? { allowPrivateAddress: true } : {}),
        },
        secrets: {
          secret: settings.secret,
          headers: settings.headers,
          ...(url !== settings.url ? { url: settings.url } : {}),
        },
      };
    }
    case 'slack':
      return {
        config: { webhookHost: new URL(settings.webhookUrl).host },
        secrets: { webhookUrl: settings.webhookUrl },
      };
    case 'email': {
      const { type: _type, password, ...config } = settings;
      return { config, secrets: password !== undefined ? { password } : {} };
    }
  }
}

/**
 * Rebuilds settings from a stored row. An invalid row (edited by hand, or from an older
 * version) is an error value: the delivery loop treats it as a permanent failure.
 */
export function fromStored(
  type: string,
  stored: StoredChannelConfig,
): ConfigResult<ChannelSettings> {
  if (!(CHANNEL_TYPES as readonly string[]).includes(type)) {
    return { ok: false, error: `unknown channel type ${type}` };
  }
  const { config, secrets } = stored;
  let input: Record<string, unknown>;
  switch (type as ChannelType) {
    case 'webhook':
      input = {
        url: typeof secrets.url === 'string' ? secrets.url : config.url,
        secret: secrets.secret,
        headers: secrets.headers ?? {},
        ...(config.allowPrivateAddress !== undefined
          ? { allowPrivateAddress: config.allowPrivateAddress }
          : {}),
      };
      break;
    case 'slack':
      input = { webhookUrl: secrets.webhookUrl };
      break;
    case 'email': {
      const { headerNames: _ignored, ...rest } = config;
      input = {
        ...rest,
        ...(secrets.password !== undefined ? { password: secrets.password } : {}),
      };
      break;
    }
  }
  const parsed = parseInput(type as ChannelType, input);
  if (!parsed.ok) return { ok: false, error: `bad channel configuration: ${parsed.error}` };
  if (parsed.value.type === 'webhook' && parsed.value.secret === '') {
    return { ok: false, error: 'bad channel configuration: missing signing secret' };
  }
  return parsed;
}
