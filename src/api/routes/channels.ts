/**
 * Channels of the caller's workspace (DESIGN §7, §8): `GET/POST/PATCH/DELETE /api/channels`,
 * `GET /api/channels/:id` and `POST /api/channels/:id/test`. Secrets (webhook signing
 * secret, custom header values, Slack URL, SMTP password) are write-only: a webhook's
 * signing secret is returned once, by the POST that creates the channel; nothing else ever
 * returns them. A channel of another workspace is a 404.
 */
import type { FastifyPluginAsync } from 'fastify';
import {
  CHANNEL_TYPES,
  fromStored,
  parseNewChannelConfig,
  patchChannelConfig,
  toStored,
  type ChannelType,
} from '../../notifier/config.ts';
import { sendTest } from '../../notifier/notifier.ts';
import { checkDestinations } from '../../notifier/destination.ts';
import {
  createChannel,
  deleteChannel,
  getChannel,
  getChannelWithSecrets,
  listChannels,
  updateChannel,
} from '../../store/channels.ts';
import { cursorQuerySchema, readCursor, toPage } from '../cursor.ts';
import type { ApiDeps } from '../types.ts';

/** A channel as the API returns it (public configuration only). */
export const channelSchema = {
  type: 'object',
  required: ['id', 'type', 'name', 'config', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string' },
    type: { type: 'string', enum: [...CHANNEL_TYPES] },
    name: { type: 'string' },
    config: {
      type: 'object',
      description:
        'Public configuration. webhook: { url, headerNames }; slack: { webhookHost }; email: { host, port, secure, user?, from, to }.',
      additionalProperties: true,
    },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
} as const;

const errorSchema = {
  type: 'object',
  properties: { error: { type: 'string' }, message: { type: 'string' } },
} as const;

const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: '^[1-9][0-9]{0,17}$' } },
} as const;

const configInputSchema = {
  type: 'object',
  description:
    'webhook: { url, secret? (whsec_...), headers? }; slack: { webhookUrl }; email: { host, port, secure, user?, password?, from, to: [] }. Validated per type.',
} as const;

interface CreateBody {
  type: ChannelType;
  name: string;
  config: Record<string, unknown>;
}

interface PatchBody {
  name?: string;
  config?: Record<string, unknown>;
  /** Read-only: may be sent back, must be the channel's type. */
  type?: ChannelType;
}

/** Read-only fields of a channel: a PATCH may send back what GET returned; they are ignored. */
const readOnlyFields = {
  id: { type: 'string', description: 'Read-only: ignored.' },
  type: {
    type: 'string',
    enum: [...CHANNEL_TYPES],
    description: "Read-only: must be the channel's type.",
  },
  createdAt: { type: 'string', description: 'Read-only: ignored.' },
  updatedAt: { type: 'string', description: 'Read-only: ignored.' },
} as const;

/** The channels routes: reads need the `read` scope, writes and tests `admin`. */
export const channelsRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  const db = deps.store.db;
  const notFound = (id: string) => ({ error: 'not_found', message: `no channel "${id}"` });
  // A destination every send would refuse (private, loopback, metadata) is refused up front.
  const refusedDestination = (config: Record<string, unknown>) =>
    checkDestinations(config, {
      allowPrivate: deps.config.allowPrivateAddresses,
      ...(deps.resolveHost ? { resolve: deps.resolveHost } : {}),
    });

  app.get<{ Querystring: { cursor?: string; limit?: number } }>(
    '/api/channels',
    {
      config: { scope: 'read' },
      schema: {
        querystring: {
          type: 'object',
          properties: {
            cursor: cursorQuerySchema,
            limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
          },
          additionalProperties: false,
        },
        response: {
          200: {
            type: 'object',
            required: ['items', 'next'],
            properties: {
              items: { type: 'array', items: channelSchema },
              next: { type: ['string', 'null'] },
            },
          },
        },
      },
    },
    async (request) =>
      toPage(
        await listChannels(db, request.workspaceId, {
          after: readCursor(request.query.cursor, ['bigint']),
          limit: request.query.limit,
        }),
      ),
  );

  app.get<{ Params: { id: string } }>(
    '/api/channels/:id',
    {
      config: { scope: 'read' },
      schema: { params: idParams, response: { 200: channelSchema, 404: errorSchema } },
    },
    async (request, reply) => {
      const channel = await getChannel(db, request.workspaceId, request.params.id);
      return channel ?? reply.code(404).send(notFound(request.params.id));
    },
  );

  app.post<{ Body: CreateBody }>(
    '/api/channels',
    {
      config: { scope: 'admin' },
      schema: {
        body: {
          type: 'object',
          required: ['type', 'name', 'config'],
          properties: {
            type: { type: 'string', enum: [...CHANNEL_TYPES] },
            name: { type: 'string', minLength: 1, maxLength: 200 },
            config: configInputSchema,
          },
          additionalProperties: false,
        },
        response: {
          201: {
            ...channelSchema,
            properties: {
              ...channelSchema.properties,
              secret: {
                type: 'string',
                description:
                  'Webhooks only: the whsec_ signing secret. Shown once, never returned again.',
              },
            },
          },
          400: errorSchema,
        },
      },
    },
    async (request, reply) => {
      const { type, name, config } = request.body;
      const parsed = parseNewChannelConfig(type, config);
      if (!parsed.ok) return reply.code(400).send({ error: 'bad_request', message: parsed.error });
      const refused = await refusedDestination(config);
      if (refused) return reply.code(400).send({ error: 'bad_request', message: refused });
      const channel = await createChannel(db, request.workspaceId, {
        type,
        name,
        ...toStored(parsed.value.settings),
      });
      return reply
        .code(201)
        .send(
          parsed.value.revealedSecret !== undefined
            ? { ...channel, secret: parsed.value.revealedSecret }
            : channel,
        );
    },
  );

  app.patch<{ Params: { id: string }; Body: PatchBody }>(
    '/api/channels/:id',
    {
      config: { scope: 'admin' },
      schema: {
        params: idParams,
        body: {
          type: 'object',
          minProperties: 1,
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 200 },
            config: {
              type: 'object',
              description:
                'Keys to change (same as POST); null removes an optional key; absent keys, secrets included, are kept; the public keys GET returns (headerNames, webhookHost) are ignored.',
            },
            ...readOnlyFields,
          },
          additionalProperties: false,
        },
        response: { 200: channelSchema, 400: errorSchema, 404: errorSchema },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const refused = request.body.config && (await refusedDestination(request.body.config));
      if (refused) return reply.code(400).send({ error: 'bad_request', message: refused });
      const updated = await db.transaction().execute(async (trx) => {
        const current = await getChannelWithSecrets(trx, request.workspaceId, id);
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
          if (!patched.ok) return { status: 400 as const, message: patched.error };
          stored = toStored('settings' in patched.value ? patched.value.settings : patched.value);
        }
        const channel = await updateChannel(trx, request.workspaceId, id, {
          ...(request.body.name !== undefined ? { name: request.body.name } : {}),
          ...(stored ?? {}),
        });
        return channel ? { status: 200 as const, channel } : { status: 404 as const };
      });
      if (updated.status === 404) return reply.code(404).send(notFound(id));
      if (updated.status === 400)
        return reply.code(400).send({ error: 'bad_request', message: updated.message });
      return updated.channel;
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/api/channels/:id',
    {
      config: { scope: 'admin' },
      schema: { params: idParams, response: { 404: errorSchema } },
    },
    async (request, reply) => {
      const deleted = await deleteChannel(db, request.workspaceId, request.params.id);
      if (!deleted) return reply.code(404).send(notFound(request.params.id));
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { id: string } }>(
    '/api/channels/:id/test',
    {
      config: { scope: 'admin' },
      schema: {
        params: idParams,
        response: {
          200: {
            type: 'object',
            required: ['ok', 'status', 'messageId', 'durationMs'],
            properties: {
              ok: { type: 'boolean' },
              status: { type: 'string', enum: ['ok', 'retry', 'permanent'] },
              code: { type: 'integer', description: 'HTTP status or SMTP reply code' },
              error: { type: 'string' },
              retryAfterMs: { type: 'integer' },
              messageId: { type: 'string' },
              durationMs: { type: 'integer' },
            },
          },
          400: errorSchema,
          404: errorSchema,
        },
      },
    },
    async (request, reply) => {
      const channel = await getChannelWithSecrets(db, request.workspaceId, request.params.id);
      const settings = channel && fromStored(channel.type, channel);
      const refused = settings?.ok && (await refusedDestination({ ...settings.value }));
      if (refused) return reply.code(400).send({ error: 'bad_request', message: refused });
      const sent = await sendTest(db, request.workspaceId, request.params.id, deps.config);
      if (!sent.found) return reply.code(404).send(notFound(request.params.id));
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
};
