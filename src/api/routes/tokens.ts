/**
 * API tokens (DESIGN §8), `admin` scope: `POST /api/tokens` creates one (so `rotscope token
 * create` works beside a server that holds the embedded database), `GET /api/tokens` lists
 * them (never the token: its first characters), `POST /api/tokens/:id/revoke` revokes one.
 * With a token or a console session, only the caller's own workspace; open on loopback with no
 * token yet (the first-run bootstrap), any workspace. A token is returned once, by the POST
 * that creates it; only its hash is stored. A revoked token stops working at once on the
 * server that revoked it, within the auth cache's 10 s on the others.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { firstTokenRefusal, SCOPES } from '../../model/tokens.ts';
import {
  createToken,
  hasActiveAdmin,
  listTokens,
  MAX_TOKEN_NAME,
  revokeToken,
  WORKSPACE_ID_PATTERN,
} from '../../store/workspaces.ts';
import { SESSION_COOKIE } from '../auth.ts';
import { bigintId, errorSchema, isoTime } from '../schemas.ts';
import type { ApiDeps } from '../types.ts';
import { withInputRules } from '../validation.ts';
import { refuse } from '../errors.ts';

const workspaceId = z.string().regex(new RegExp(WORKSPACE_ID_PATTERN));

const createBody = z.strictObject({
  workspace: workspaceId.optional().describe("Default: the caller's workspace"),
  scope: z.enum(SCOPES),
  name: z
    .string()
    .max(MAX_TOKEN_NAME)
    .optional()
    .describe('Tells the token apart in listings, e.g. "ci ingest"'),
});

const createdToken = z
  .object({
    id: z.string(),
    token: z.string().describe('Shown once, never returned again'),
    workspace: z.string(),
    scope: z.enum(SCOPES),
    name: z.string(),
  })
  .meta({ id: 'CreatedToken' });

const tokenInfo = z
  .object({
    id: z.string(),
    name: z.string(),
    workspace: z.string(),
    scope: z.enum(SCOPES),
    prefix: z.string().describe("The token's first characters, to tell it apart"),
    createdAt: isoTime,
    revokedAt: isoTime.nullable(),
  })
  .meta({ id: 'Token' });

/**
 * The caller's workspace, or undefined for the first-run bootstrap (open on loopback: no
 * bearer token and no console session), which may act on any workspace.
 */
export function ownWorkspace(request: FastifyRequest): string | undefined {
  const bootstrap =
    request.headers.authorization === undefined && request.cookies?.[SESSION_COOKIE] === undefined;
  return bootstrap ? undefined : request.workspaceId;
}

/** The token routes; `admin` scope. */
export const tokensRoutes = withInputRules<ApiDeps>(async (app, deps) => {
  const db = deps.store.db;

  app.post(
    '/api/tokens',
    {
      config: { scope: 'admin' },
      schema: {
        body: createBody,
        response: { 201: createdToken, 400: errorSchema, 403: errorSchema, 409: errorSchema },
      },
    },
    async (request, reply) => {
      const workspace = request.body.workspace ?? request.workspaceId;
      const own = ownWorkspace(request);
      if (own !== undefined && workspace !== own) {
        return refuse(
          reply,
          'forbidden',
          `this token belongs to workspace "${own}"; it cannot create tokens for "${workspace}"`,
        );
      }
      const refusal = firstTokenRefusal(
        workspace,
        request.body.scope,
        await hasActiveAdmin(db, workspace),
      );
      if (refusal !== null) return refuse(reply, 'conflict', refusal);
      const name = request.body.name?.trim() ?? '';
      const { token, id } = await createToken(db, workspace, request.body.scope, undefined, name);
      deps.tokensChanged();
      request.log.info({ workspace, scope: request.body.scope, tokenId: id }, 'token created');
      return reply.code(201).send({ id, token, workspace, scope: request.body.scope, name });
    },
  );

  app.get(
    '/api/tokens',
    {
      config: { scope: 'admin' },
      schema: {
        querystring: z.strictObject({
          workspace: workspaceId
            .optional()
            .describe("Only this workspace's tokens (a token may only name its own)"),
          includeRevoked: z
            .enum(['true', 'false'])
            .optional()
            .describe('Also list revoked tokens (default false)'),
        }),
        response: { 200: z.object({ items: z.array(tokenInfo) }), 403: errorSchema },
      },
    },
    async (request, reply) => {
      const own = ownWorkspace(request);
      const { workspace } = request.query;
      if (own !== undefined && workspace !== undefined && workspace !== own) {
        return refuse(
          reply,
          'forbidden',
          `this token belongs to workspace "${own}"; it cannot list the tokens of "${workspace}"`,
        );
      }
      const items = await listTokens(db, own ?? workspace, {
        includeRevoked: request.query.includeRevoked === 'true',
      });
      return { items };
    },
  );

  app.post(
    '/api/tokens/:id/revoke',
    {
      config: { scope: 'admin' },
      schema: {
        params: z.strictObject({ id: bigintId }),
        response: { 200: tokenInfo, 404: errorSchema },
      },
    },
    async (request, reply) => {
      const revoked = await revokeToken(db, ownWorkspace(request), request.params.id);
      if (!revoked) {
        return refuse(reply, 'not_found', `no token "${request.params.id}"`);
      }
      deps.tokensChanged();
      request.log.info({ workspace: revoked.workspace, tokenId: revoked.id }, 'token revoked');
      return revoked;
    },
  );
});
