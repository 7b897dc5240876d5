/** GET /api/conversations, /api/conversations/:id, /api/runs/:runId and /api/coverage. */
import type { FastifyPluginAsync } from 'fastify';
import { getConversation, getCoverage, getRun, listConversations } from '../../store/browse.ts';
import { cursorQuerySchema, readCursor, toPage } from '../cursor.ts';
import type { ApiDeps } from '../types.ts';

const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 512 } },
} as const;

export const conversationsRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  const db = deps.store.db;

  app.get<{ Querystring: { limit?: number; cursor?: string } }>(
    '/api/conversations',
    {
      config: { scope: 'read' },
      schema: {
        querystring: {
          type: 'object',
          properties: {
            limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
            cursor: cursorQuerySchema,
          },
          additionalProperties: false,
        },
      },
    },
    async (request) =>
      toPage(
        await listConversations(db, request.workspaceId, {
          limit: request.query.limit ?? 50,
          after: readCursor(request.query.cursor, ['bigint', 'text']),
        }),
      ),
  );

  app.get<{ Params: { id: string } }>(
    '/api/conversations/:id',
    { config: { scope: 'read' }, schema: { params: idParams } },
    async (request, reply) => {
      const found = await getConversation(db, request.workspaceId, request.params.id);
      if (!found)
        return reply
          .code(404)
          .send({ error: 'not_found', message: `no conversation "${request.params.id}"` });
      return { id: request.params.id, ...found };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/runs/:id',
    { config: { scope: 'read' }, schema: { params: idParams } },
    async (request, reply) => {
      const found = await getRun(db, request.workspaceId, request.params.id);
      if (!found)
        return reply
          .code(404)
          .send({ error: 'not_found', message: `no run "${request.params.id}"` });
      return { id: request.params.id, ...found };
    },
  );

  app.get('/api/coverage', { config: { scope: 'read' } }, async (request) =>
    getCoverage(db, request.workspaceId),
  );
};
