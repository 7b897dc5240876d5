/**
 * `GET /api/deliveries?findingId=&channelId=`: the caller's workspace's deliveries, newest
 * first, each with its attempt log (status code or error, duration, outcome), so a user can
 * see why a message did not arrive. Cursor pagination (`{ items, next }`, `?cursor=`).
 */
import type { FastifyPluginAsync } from 'fastify';
import { listDeliveries } from '../../store/deliveries.ts';
import { cursorQuerySchema, readCursor, toPage } from '../cursor.ts';
import type { ApiDeps } from '../types.ts';

const attemptSchema = {
  type: 'object',
  required: ['at', 'statusCode', 'error', 'durationMs', 'outcome'],
  properties: {
    at: { type: 'string', format: 'date-time' },
    statusCode: { type: ['integer', 'null'], description: 'HTTP status or SMTP reply code' },
    error: { type: ['string', 'null'] },
    durationMs: { type: 'integer' },
    outcome: { type: 'string', enum: ['delivered', 'retry', 'failed', 'dead'] },
  },
} as const;

/** A delivery as the API returns it. */
export const deliverySchema = {
  type: 'object',
  required: [
    'id',
    'findingId',
    'channelId',
    'event',
    'status',
    'attemptCount',
    'nextAttemptAt',
    'lastError',
    'createdAt',
    'updatedAt',
    'deliveredAt',
    'attempts',
  ],
  properties: {
    id: { type: 'string', description: 'Also the webhook-id header of webhook messages' },
    findingId: { type: 'string' },
    channelId: { type: 'string' },
    event: { type: 'string', enum: ['created', 'escalated'] },
    status: { type: 'string', enum: ['pending', 'delivered', 'failed', 'dead'] },
    attemptCount: { type: 'integer' },
    nextAttemptAt: { type: ['string', 'null'], format: 'date-time' },
    lastError: { type: ['string', 'null'] },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
    deliveredAt: { type: ['string', 'null'], format: 'date-time' },
    attempts: { type: 'array', items: attemptSchema },
  },
} as const;

interface ListQuery {
  findingId?: string;
  channelId?: string;
  cursor?: string;
  limit?: number;
}

/** The deliveries route; `read` scope. */
export const deliveriesRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  const db = deps.store.db;

  app.get<{ Querystring: ListQuery }>(
    '/api/deliveries',
    {
      config: { scope: 'read' },
      schema: {
        querystring: {
          type: 'object',
          properties: {
            findingId: { type: 'string', pattern: '^[1-9][0-9]{0,17}$' },
            channelId: { type: 'string', pattern: '^[1-9][0-9]{0,17}$' },
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
              items: { type: 'array', items: deliverySchema },
              next: { type: ['string', 'null'] },
            },
          },
          400: {
            type: 'object',
            properties: { error: { type: 'string' }, message: { type: 'string' } },
          },
        },
      },
    },
    async (request) => {
      const { cursor, ...filter } = request.query;
      const after = readCursor(cursor, ['micros', 'text']);
      return toPage(await listDeliveries(db, request.workspaceId, { ...filter, after }));
    },
  );
};
