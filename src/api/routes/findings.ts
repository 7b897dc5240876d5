/**
 * GET /api/findings (filters, cursor pagination) and GET /api/findings/:id (DESIGN §8).
 * Both read the caller's workspace only; a finding of another workspace is a 404.
 */
import { z } from 'zod';
import { DETECTOR_IDS, findingSchema, SEVERITIES } from '../../model/findings.ts';
import { getFinding, listFindings, MAX_FINDINGS_PAGE } from '../../store/findings.ts';
import { readCursor, toPage } from '../cursor.ts';
import { cursorQuery, errorSchema, limitQuery, pageOf } from '../schemas.ts';
import type { ApiDeps } from '../types.ts';
import { BadRequestError, withInputRules } from '../validation.ts';

const listQuery = z.strictObject({
  detector: z.enum(DETECTOR_IDS).optional(),
  severity: z.enum(SEVERITIES).optional(),
  conversationId: z.string().min(1).max(512).optional(),
  runId: z.string().min(1).max(512).optional(),
  model: z.string().min(1).max(512).optional().describe('The model the finding names, exactly.'),
  since: z.iso.datetime({ offset: true }).optional().describe('Created at or after.'),
  until: z.iso.datetime({ offset: true }).optional().describe('Created before.'),
  limit: limitQuery(MAX_FINDINGS_PAGE),
  cursor: cursorQuery,
});

/**
 * A date-time query parameter as a Date. Should the schema's `date-time` format let through a
 * time no Date holds, that is a 400 naming the parameter.
 */
function queryTime(name: string, value: string): Date {
  const time = new Date(value);
  if (Number.isNaN(time.getTime()))
    throw new BadRequestError(`querystring/${name} is not a time this API can read`);
  return time;
}

/** The findings routes; `read` scope. */
export const findingsRoutes = withInputRules<ApiDeps>(async (app, deps) => {
  const db = deps.store.db;

  app.get(
    '/api/findings',
    {
      config: { scope: 'read' },
      schema: {
        querystring: listQuery,
        response: { 200: pageOf(findingSchema), 400: errorSchema },
      },
    },
    async (request) => {
      const { limit, cursor, since, until, ...filter } = request.query;
      const after = readCursor(cursor, ['micros', 'bigint']);
      const page = await listFindings(
        db,
        request.workspaceId,
        {
          ...filter,
          since: since === undefined ? undefined : queryTime('since', since),
          until: until === undefined ? undefined : queryTime('until', until),
        },
        { limit, after },
      );
      return toPage(page);
    },
  );

  app.get(
    '/api/findings/:id',
    {
      config: { scope: 'read' },
      schema: {
        params: z.strictObject({ id: z.string().min(1).max(64) }),
        response: { 200: findingSchema, 404: errorSchema },
      },
    },
    async (request, reply) => {
      const finding = await getFinding(db, request.workspaceId, request.params.id);
      if (!finding) {
        return reply
          .code(404)
          .send({ error: 'not_found', message: `no finding "${request.params.id}"` });
      }
      return finding;
    },
  );
});
