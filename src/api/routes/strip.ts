/**
 * The run view's data (issue 9, the console's run view):
 * - `GET /api/conversations/:id/strip` and `GET /api/runs/:id/strip`: the context growth strip,
 *   one row per LLM call in start order as columns (src/reading/strip.ts), with the findings that
 *   mark it (drops, cut-off outputs, tool takeovers), the usage thresholds to draw and the
 *   colour bands of a call's usage, from the workspace's knobs (src/reading/strip.ts
 *   loadStripView, src/model/usage-bands.ts);
 * - `GET /api/findings/:id/what-was-lost`: one drop's detail (src/reading/what-was-lost.ts).
 */
import { z } from 'zod';
import { stripSchema } from '../../reading/answers/strip.ts';
import { whatWasLostSchema } from '../../reading/answers/what-was-lost.ts';
import { loadStripView } from '../../reading/strip.ts';
import { loadWhatWasLost } from '../../reading/what-was-lost.ts';
import { errorSchema } from '../schemas.ts';
import type { ApiDeps } from '../types.ts';
import { withInputRules } from '../validation.ts';
import { refuse } from '../errors.ts';

const idParams = z.strictObject({ id: z.string().min(1).max(512) });

/**
 * The strip is written as is: it is built to `stripSchema` by src/reading/strip.ts, and checking
 * its 100,000+ values on every answer (the zod serializer's parse) costs more than building it.
 * The schema still documents it (OpenAPI) and the tests check the shape.
 */
const writeAsIs = () => (data: unknown) => JSON.stringify(data);

export const stripRoutes = withInputRules<ApiDeps>(async (app, deps) => {
  const db = deps.store.db;

  app.get(
    '/api/conversations/:id/strip',
    {
      config: { scope: 'read' },
      schema: { params: idParams, response: { 200: stripSchema, 404: errorSchema } },
      serializerCompiler: writeAsIs,
    },
    async (request, reply) => {
      const { id } = request.params;
      const strip = await loadStripView(db, request.workspaceId, id, { conversationId: id });
      if (!strip) return refuse(reply, 'not_found', `no conversation "${id}"`);
      return strip;
    },
  );

  app.get(
    '/api/runs/:id/strip',
    {
      config: { scope: 'read' },
      schema: { params: idParams, response: { 200: stripSchema, 404: errorSchema } },
      serializerCompiler: writeAsIs,
    },
    async (request, reply) => {
      const { id } = request.params;
      const strip = await loadStripView(db, request.workspaceId, id, { runId: id });
      if (!strip) return refuse(reply, 'not_found', `no run "${id}"`);
      return strip;
    },
  );

  app.get(
    '/api/findings/:id/what-was-lost',
    {
      config: { scope: 'read' },
      schema: {
        params: z.strictObject({ id: z.string().min(1).max(64) }),
        response: { 200: whatWasLostSchema, 404: errorSchema },
      },
    },
    async (request, reply) => {
      const detail = await loadWhatWasLost(db, request.workspaceId, request.params.id);
      if (!detail)
        return refuse(reply, 'not_found', `no history_lost finding "${request.params.id}"`);
      return detail;
    },
  );
});
