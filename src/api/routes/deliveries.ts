/**
 * `GET /api/deliveries?findingId=&channelId=`: the caller's workspace's deliveries, newest
 * first, each with its attempt log (status code or error, duration, outcome), so a user can
 * see why a message did not arrive. Cursor pagination (`{ items, next }`, `?cursor=`).
 */
import { z } from 'zod';
import { listDeliveries } from '../../store/deliveries.ts';
import { readCursor, toPage } from '../cursor.ts';
import { bigintId, cursorQuery, errorSchema, isoTime, limitQuery, pageOf } from '../schemas.ts';
import type { ApiDeps } from '../types.ts';
import { withInputRules } from '../validation.ts';

/** Values a string field takes, documented (the store types these fields as plain strings). */
const oneOf = (values: string[]) => z.string().meta({ enum: values });

const attemptSchema = z.object({
  at: isoTime,
  statusCode: z.int().nullable().describe('HTTP status or SMTP reply code'),
  error: z.string().nullable(),
  durationMs: z.int(),
  outcome: oneOf(['delivered', 'retry', 'failed', 'dead']),
});

/** A delivery as the API returns it. */
export const deliverySchema = z
  .object({
    id: z.string().describe('Also the webhook-id header of webhook messages'),
    findingId: z.string().nullable().describe('The finding announced; null for a window notice'),
    noticeId: z
      .string()
      .nullable()
      .describe(
        'The window notice announced (a model whose calls no source gives a window); null for a finding',
      ),
    channelId: z.string(),
    event: oneOf(['created', 'escalated', 'window.unknown']),
    status: z
      .enum(['pending', 'delivered', 'failed', 'dead', 'muted'])
      .describe('muted: a mute matched the finding when it was queued; never sent'),
    muteId: z
      .string()
      .nullable()
      .describe('The mute that held it back (status muted); null otherwise or once deleted'),
    attemptCount: z.int(),
    nextAttemptAt: isoTime.nullable(),
    lastError: z.string().nullable(),
    createdAt: isoTime,
    updatedAt: isoTime,
    deliveredAt: isoTime.nullable(),
    attempts: z.array(attemptSchema),
  })
  .meta({ id: 'Delivery' });

/** The deliveries route; `read` scope. */
export const deliveriesRoutes = withInputRules<ApiDeps>(async (app, deps) => {
  const db = deps.store.db;

  app.get(
    '/api/deliveries',
    {
      config: { scope: 'read' },
      schema: {
        querystring: z.strictObject({
          findingId: bigintId.optional(),
          channelId: bigintId.optional(),
          cursor: cursorQuery,
          limit: limitQuery(200),
        }),
        response: { 200: pageOf(deliverySchema), 400: errorSchema },
      },
    },
    async (request) => {
      const { cursor, ...filter } = request.query;
      const after = readCursor(cursor, ['micros', 'text']);
      return toPage(await listDeliveries(db, request.workspaceId, { ...filter, after }));
    },
  );
});
