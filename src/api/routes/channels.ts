/**
 * Channels of the caller's workspace (DESIGN §7, §8): `GET/POST/PATCH/DELETE /api/channels`,
 * `GET /api/channels/:id` and `POST /api/channels/:id/test`. Secrets (webhook signing
 * secret, custom header values, Slack URL, SMTP password) are write-only: a webhook's
 * signing secret is returned once, by the POST that creates the channel; nothing else ever
 * returns them. A channel of another workspace is a 404.
 */
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import {
  CHANNEL_TYPES,
  fromStored,
  maskUrl,
  parseNewChannelConfig,
  patchChannelConfig,
  toStored,
} from '../../notifier/config.ts';
import { channelKeys, sendTest } from '../../notifier/notifier.ts';
import { checkDestinations } from '../../notifier/destination.ts';
import {
  createChannel,
  deleteChannel,
  getChannel,
  getChannelWithSecrets,
  listChannels,
  secretsCensus,
  updateChannel,
  type ChannelRecord,
} from '../../store/channels.ts';
import { UnknownSecretKeyError } from '../../secrets/keyring.ts';
import { readCursor, toPage } from '../cursor.ts';
import { bigintId, cursorQuery, errorSchema, isoTime, limitQuery, pageOf } from '../schemas.ts';
import type { ApiDeps } from '../types.ts';
import { withInputRules } from '../validation.ts';
import { ownWorkspace } from './tokens.ts';
import { refuse } from '../errors.ts';

/** A channel as the API returns it (public configuration only). */
export const channelSchema = z
  .object({
    id: z.string(),
    type: z.enum(CHANNEL_TYPES),
    name: z.string(),
    config: z
      .record(z.string(), z.unknown())
      .describe(
        'Public configuration. webhook: { url, headerNames, allowPrivateAddress? }; slack: { webhookHost }; email: { host, port, secure, user?, from, to, allowPrivateAddress? }.',
      ),
    createdAt: isoTime,
    updatedAt: isoTime,
  })
  .meta({ id: 'Channel' });

const idParams = z.strictObject({ id: bigintId });

const channelName = z.string().min(1).max(200);

/** The per-channel switch for private destinations, documented as a field of `config`. */
const allowPrivateAddress = z
  .boolean()
  .describe(
    'Webhook and email channels: true lets this channel (only) reach a private, loopback, link-local or reserved address, such as a receiver or SMTP relay on this machine or network. Default false: such destinations are refused with a 400 that says how to allow them. Needs an admin token; no restart. ROTSCOPE_ALLOW_PRIVATE_ADDRESSES=true allows them for every channel.',
  );

const createBody = z.strictObject({
  type: z.enum(CHANNEL_TYPES),
  name: channelName,
  config: z
    .looseObject({ allowPrivateAddress: allowPrivateAddress.optional() })
    .describe(
      'webhook: { url, secret? (whsec_...), headers?, allowPrivateAddress? }; slack: { webhookUrl } (a Slack incoming webhook, https://hooks.slack.com/...); email: { host, port, secure, user?, password?, from, to: [], allowPrivateAddress? }. Validated per type. Destinations at private, loopback, link-local or reserved addresses (and names resolving to them) are refused with a 400 unless allowPrivateAddress is true (this channel only; an admin token, no restart) or the server runs with ROTSCOPE_ALLOW_PRIVATE_ADDRESSES=true (every channel).',
    ),
});

/**
 * A PATCH: the fields to change, or a channel as GET returned it. Its read-only fields are
 * ignored, except `type`, which must be the channel's own.
 */
const patchBody = z
  .strictObject({
    name: channelName.optional(),
    config: z
      .looseObject({ allowPrivateAddress: allowPrivateAddress.nullable().optional() })
      .optional()
      .describe(
        'Keys to change (same as POST); null removes an optional key; absent keys, secrets included, are kept; the public keys GET returns (headerNames, webhookHost) are ignored.',
      ),
    id: z.string().optional().describe('Read-only: ignored.'),
    type: z.enum(CHANNEL_TYPES).optional().describe("Read-only: must be the channel's type."),
    createdAt: z.string().optional().describe('Read-only: ignored.'),
    updatedAt: z.string().optional().describe('Read-only: ignored.'),
  })
  .refine((body) => Object.keys(body).length > 0, 'must name at least one field');

const testResult = z
  .object({
    ok: z.boolean(),
    status: z.enum(['ok', 'retry', 'permanent']),
    code: z.int().optional().describe('HTTP status or SMTP reply code'),
    error: z.string().optional(),
    retryAfterMs: z.int().optional(),
    messageId: z.string(),
    durationMs: z.int(),
  })
  .meta({ id: 'ChannelTestResult' });

/** The answer of GET /api/secrets. */
const secretsCensusSchema = z
  .object({
    keysHere: z.array(z.string()),
    plaintext: z.number(),
    byKey: z.record(z.string(), z.number()),
  })
  .meta({ id: 'SecretsCensus' });

/** The answer of POST /api/channels: the channel, with a webhook's secret once. */
const createdChannelSchema = channelSchema
  .extend({
    secret: z
      .string()
      .optional()
      .describe('Webhooks only: the whsec_ signing secret. Shown once, never returned again.'),
  })
  .meta({ id: 'CreatedChannel' });

/**
 * A channel as the API returns it: a webhook URL with credentials or token-like parts masked
 * (rows stored before URLs were split into public and secret parts hold the whole URL).
 */
function publicView<T extends ChannelRecord>(channel: T): T {
  const url = channel.config.url;
  if (channel.type !== 'webhook' || typeof url !== 'string') return channel;
  return { ...channel, config: { ...channel.config, url: maskUrl(url) } };
}

/** The channels routes: reads need the `read` scope, writes and tests `admin`. */
export const channelsRoutes = withInputRules<ApiDeps>(async (app, deps) => {
  const db = deps.store.db;
  /** The keys channel secrets are sealed with (ROTSCOPE_SECRET_KEY or the data directory's key file). */
  const keys = () => channelKeys(deps.config);
  const notFound = (reply: FastifyReply, id: string) =>
    refuse(reply, 'not_found', `no channel "${id}"`);
  // A destination every send would refuse (private, loopback, metadata) is refused up front,
  // unless the server (ROTSCOPE_ALLOW_PRIVATE_ADDRESSES) or the channel (allowPrivateAddress) allows it.
  const refusedDestination = (config: Record<string, unknown>) =>
    checkDestinations(config, {
      allowPrivate: deps.config.allowPrivateAddresses,
      ...(deps.resolveHost ? { resolve: deps.resolveHost } : {}),
    });
  /** A 400 whose message is written for the person who filled the form; `problems` has the field. */
  const badConfig = (
    reply: FastifyReply,
    refused: { message: string; path?: Array<string | number> | undefined },
  ) =>
    refuse(
      reply,
      'bad_request',
      refused.message,
      refused.path
        ? { problems: [{ path: ['body', 'config', ...refused.path], message: refused.message }] }
        : {},
    );

  // What `rotscope secrets status` prints, for the CLI beside a server holding the embedded
  // database: the key ids this server has (never the keys) and what each sealed. The open server
  // (no token yet) counts every workspace; an admin token, its own.
  app.get(
    '/api/secrets',
    {
      config: { scope: 'admin' },
      schema: {
        response: {
          200: secretsCensusSchema,
        },
      },
    },
    async (request) => {
      const census = await secretsCensus(db, ownWorkspace(request));
      return { keysHere: keys().ids, ...census };
    },
  );

  app.get(
    '/api/channels',
    {
      config: { scope: 'read' },
      schema: {
        querystring: z.strictObject({ cursor: cursorQuery, limit: limitQuery(200) }),
        response: { 200: pageOf(channelSchema), 400: errorSchema },
      },
    },
    async (request) => {
      const page = await listChannels(db, request.workspaceId, {
        after: readCursor(request.query.cursor, ['bigint']),
        limit: request.query.limit,
      });
      return toPage({ ...page, items: page.items.map(publicView) });
    },
  );

  app.get(
    '/api/channels/:id',
    {
      config: { scope: 'read' },
      schema: { params: idParams, response: { 200: channelSchema, 404: errorSchema } },
    },
    async (request, reply) => {
      const channel = await getChannel(db, request.workspaceId, request.params.id);
      return channel ? publicView(channel) : notFound(reply, request.params.id);
    },
  );

  app.post(
    '/api/channels',
    {
      config: { scope: 'admin' },
      schema: {
        body: createBody,
        response: {
          201: createdChannelSchema,
          400: errorSchema,
        },
      },
    },
    async (request, reply) => {
      const { type, name, config } = request.body;
      const parsed = parseNewChannelConfig(type, config);
      if (!parsed.ok) return badConfig(reply, { message: parsed.error, path: parsed.path });
      const refused = await refusedDestination({ ...parsed.value.settings });
      if (refused) return badConfig(reply, refused);
      const channel = await createChannel(db, keys(), request.workspaceId, {
        type,
        name,
        ...toStored(parsed.value.settings),
      });
      return reply
        .code(201)
        .send(
          parsed.value.revealedSecret !== undefined
            ? { ...publicView(channel), secret: parsed.value.revealedSecret }
            : publicView(channel),
        );
    },
  );

  app.patch(
    '/api/channels/:id',
    {
      config: { scope: 'admin' },
      schema: {
        params: idParams,
        body: patchBody,
        response: { 200: channelSchema, 400: errorSchema, 404: errorSchema },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (request.body.config !== undefined) {
        // The destination check runs on the configuration as it would be after the change (a
        // new URL on a channel allowed private addresses, or that permission taken away from a
        // channel with a private URL), outside the transaction: a lookup may take 2 s.
        const current = await getChannelWithSecrets(db, keys(), request.workspaceId, id).catch(
          (error: unknown) => {
            // Sealed with a key this server lacks: the change alone is checked, as before.
            if (error instanceof UnknownSecretKeyError) return undefined;
            throw error;
          },
        );
        const settings = current && fromStored(current.type, current);
        const patched = settings?.ok
          ? patchChannelConfig(settings.value, request.body.config)
          : { ok: false as const };
        const refused = await refusedDestination(
          patched.ok ? { ...patched.value } : request.body.config,
        );
        if (refused) return badConfig(reply, refused);
      }
      const updated = await db.transaction().execute(async (trx) => {
        const current = await getChannelWithSecrets(trx, keys(), request.workspaceId, id);
        if (!current) return { status: 404 as const };
        if (request.body.type !== undefined && request.body.type !== current.type) {
          const message = `body/type is read-only: channel ${id} is a ${current.type} channel`;
          return { status: 400 as const, message };
        }
        let stored: ReturnType<typeof toStored> | undefined;
        if (request.body.config !== undefined) {
          const settings = fromStored(current.type, current);
          // A row that no longer validates can still be repaired by a full configuration.
          const patched = settings.ok
            ? patchChannelConfig(settings.value, request.body.config)
            : parseNewChannelConfig(current.type, request.body.config);
          if (!patched.ok)
            return { status: 400 as const, message: patched.error, path: patched.path };
          stored = toStored('settings' in patched.value ? patched.value.settings : patched.value);
        }
        const channel = await updateChannel(trx, keys(), request.workspaceId, id, {
          ...(request.body.name !== undefined ? { name: request.body.name } : {}),
          ...(stored ?? {}),
        });
        return channel ? { status: 200 as const, channel } : { status: 404 as const };
      });
      if (updated.status === 404) return notFound(reply, id);
      if (updated.status === 400)
        return badConfig(reply, {
          message: updated.message,
          path: 'path' in updated ? updated.path : undefined,
        });
      return publicView(updated.channel);
    },
  );

  app.delete(
    '/api/channels/:id',
    {
      config: { scope: 'admin' },
      schema: {
        params: idParams,
        response: { 204: z.void().describe('Deleted.'), 404: errorSchema },
      },
    },
    async (request, reply) => {
      const deleted = await deleteChannel(db, request.workspaceId, request.params.id);
      if (!deleted) return notFound(reply, request.params.id);
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/channels/:id/test',
    {
      config: { scope: 'admin' },
      schema: {
        params: idParams,
        response: { 200: testResult, 400: errorSchema, 404: errorSchema },
      },
    },
    async (request, reply) => {
      // Sealed with a key this server lacks: the send below reports it (status retry).
      const channel = await getChannelWithSecrets(
        db,
        keys(),
        request.workspaceId,
        request.params.id,
      ).catch((error: unknown) => {
        if (error instanceof UnknownSecretKeyError) return undefined;
        throw error;
      });
      const settings = channel && fromStored(channel.type, channel);
      const refused = settings?.ok && (await refusedDestination({ ...settings.value }));
      if (refused) return badConfig(reply, refused);
      const sent = await sendTest(db, request.workspaceId, request.params.id, deps.config);
      if (!sent.found) return notFound(reply, request.params.id);
      const { result } = sent;
      return {
        ok: result.status === 'ok',
        status: result.status,
        ...(result.code !== undefined ? { code: result.code } : {}),
        ...(result.status !== 'ok' ? { error: result.error } : {}),
        ...(result.status === 'retry' && result.afterMs !== undefined
          ? { retryAfterMs: result.afterMs }
          : {}),
        messageId: sent.messageId,
        durationMs: sent.durationMs,
      };
    },
  );
});
