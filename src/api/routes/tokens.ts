/**
 * `POST /api/tokens`: creates an API token while the server runs, so `rotscope token create`
 * works beside a server that holds the embedded database (DESIGN §8). `admin` scope. With a
 * token, only for the token's own workspace; without one (bound to loopback with no token
 * yet: the first-run bootstrap) for any workspace. The token is returned once; only its hash
 * is stored.
 */
import type { FastifyPluginAsync } from 'fastify';
import { createToken, WORKSPACE_ID_PATTERN } from '../../store/workspaces.ts';
import type { Scope } from '../../model/tokens.ts';
import type { ApiDeps } from '../types.ts';

const SCOPES: readonly Scope[] = ['ingest', 'read', 'admin'];

const errorSchema = {
  type: 'object',
  properties: { error: { type: 'string' }, message: { type: 'string' } },
} as const;

interface CreateBody {
  workspace?: string;
  scope: Scope;
}

/** The token routes; `admin` scope. */
export const tokensRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  const db = deps.store.db;

  app.post<{ Body: CreateBody }>(
    '/api/tokens',
    {
      config: { scope: 'admin' },
      schema: {
        body: {
          type: 'object',
          required: ['scope'],
          properties: {
            workspace: {
              type: 'string',
              pattern: WORKSPACE_ID_PATTERN,
              description: "Default: the caller's workspace",
            },
            scope: { type: 'string', enum: [...SCOPES] },
          },
          additionalProperties: false,
        },
        response: {
          201: {
            type: 'object',
            required: ['id', 'token', 'workspace', 'scope'],
            properties: {
              id: { type: 'string' },
              token: { type: 'string', description: 'Shown once, never returned again' },
              workspace: { type: 'string' },
              scope: { type: 'string', enum: [...SCOPES] },
            },
          },
          400: errorSchema,
          403: errorSchema,
        },
      },
    },
    async (request, reply) => {
      const workspace = request.body.workspace ?? request.workspaceId;
      const bootstrap = request.headers.authorization === undefined;
      if (!bootstrap && workspace !== request.workspaceId) {
        return reply.code(403).send({
          error: 'forbidden',
          message: `this token belongs to workspace "${request.workspaceId}"; it cannot create tokens for "${workspace}"`,
        });
      }
      const { token, id } = await createToken(db, workspace, request.body.scope);
      request.log.info({ workspace, scope: request.body.scope, tokenId: id }, 'token created');
      return reply.code(201).send({ id, token, workspace, scope: request.body.scope });
    },
  );
};
