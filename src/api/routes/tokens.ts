/**
 * `POST /api/tokens`: creates an API token while the server runs, so `rotscope token create`
 * works beside a server that holds the embedded database (DESIGN §8). `admin` scope. With a
 * token, only for the token's own workspace; without one (bound to loopback with no token
 * yet: the first-run bootstrap) for any workspace. The token is returned once; only its hash
 * is stored.
 */
import { z } from 'zod';
import { SCOPES } from '../../model/tokens.ts';
import { createToken, WORKSPACE_ID_PATTERN } from '../../store/workspaces.ts';
import { errorSchema } from '../schemas.ts';
import type { ApiDeps } from '../types.ts';
import { withInputRules } from '../validation.ts';

const createBody = z.strictObject({
  workspace: z
    .string()
    .regex(new RegExp(WORKSPACE_ID_PATTERN))
    .optional()
    .describe("Default: the caller's workspace"),
  scope: z.enum(SCOPES),
});

const createdToken = z.object({
  id: z.string(),
  token: z.string().describe('Shown once, never returned again'),
  workspace: z.string(),
  scope: z.enum(SCOPES),
});

/** The token routes; `admin` scope. */
export const tokensRoutes = withInputRules<ApiDeps>(async (app, deps) => {
  const db = deps.store.db;

  app.post(
    '/api/tokens',
    {
      config: { scope: 'admin' },
      schema: {
        body: createBody,
        response: { 201: createdToken, 400: errorSchema, 403: errorSchema },
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
});
