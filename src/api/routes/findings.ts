/**
 * GET /api/findings (filters, cursor pagination, or every page as CSV), GET /api/findings/:id
 * (DESIGN §8), and acknowledging one with a note (issue 37 §3). Every route reads or changes the
 * caller's workspace only; a finding of another workspace is a 404.
 */
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { DETECTOR_IDS, findingSchema, SEVERITIES, type Finding } from '../../model/findings.ts';
import {
  acknowledgeFinding,
  getFinding,
  listFindings,
  MAX_ACKNOWLEDGEMENT_NOTE,
  MAX_FINDINGS_PAGE,
  unacknowledgeFinding,
  type FindingKey,
} from '../../store/findings.ts';
import { allPages, csvColumns, csvReadSize, FORMAT_VALUES, sendCsv, wantsCsv } from '../csv.ts';
import { readCursor, toPage } from '../cursor.ts';
import { cursorQuery, errorSchema, limitQuery, pageOf } from '../schemas.ts';
import type { ApiDeps } from '../types.ts';
import { BadRequestError, withInputRules } from '../validation.ts';
import { refuse } from '../errors.ts';

const listQuery = z.strictObject({
  detector: z.enum(DETECTOR_IDS).optional(),
  severity: z.enum(SEVERITIES).optional(),
  conversationId: z.string().min(1).max(512).optional(),
  runId: z.string().min(1).max(512).optional(),
  model: z.string().min(1).max(512).optional().describe('The model the finding names, exactly.'),
  project: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .describe(
      "Its conversation's project exactly as stored: the working directory or repository URL (`/srv/app/alpha-svc`).",
    ),
  acknowledged: z
    .enum(['true', 'false'])
    .optional()
    .describe('true: only acknowledged findings; false: only those nobody acknowledged yet.'),
  since: z.iso.datetime({ offset: true }).optional().describe('Created at or after.'),
  until: z.iso.datetime({ offset: true }).optional().describe('Created before.'),
  limit: limitQuery(MAX_FINDINGS_PAGE).describe(
    'Page size (1..200, default 50); for CSV, how many rows are read at a time (default 200; every page is sent).',
  ),
  cursor: cursorQuery,
  format: z
    .enum(FORMAT_VALUES)
    .optional()
    .describe(
      'csv: every matching finding (all pages) as CSV, as `Accept: text/csv` asks; json (default).',
    ),
});

const idParams = z.strictObject({ id: z.string().min(1).max(64) });

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

const notFound = (reply: FastifyReply, id: string) =>
  refuse(reply, 'not_found', `no finding "${id}"`);

/** The findings routes; reading needs `read` scope, acknowledging `admin`. */
export const findingsRoutes = withInputRules<ApiDeps>(async (app, deps) => {
  const db = deps.store.db;

  app.get(
    '/api/findings',
    {
      config: { scope: 'read' },
      schema: {
        description:
          'Findings newest first, a page at a time. With `Accept: text/csv` or `?format=csv` the answer is CSV instead: a header row (the Finding fields, `id` first; `details` as JSON), one row per finding of every page, the filters applied, streamed.',
        querystring: listQuery,
        produces: ['application/json', 'text/csv'],
        response: { 200: pageOf(findingSchema), 400: errorSchema },
      },
    },
    async (request, reply) => {
      const { limit, cursor, since, until, format, acknowledged, ...filter } = request.query;
      const after = readCursor(cursor, ['micros', 'bigint']);
      const where = {
        ...filter,
        since: since === undefined ? undefined : queryTime('since', since),
        until: until === undefined ? undefined : queryTime('until', until),
        acknowledged: acknowledged === undefined ? undefined : acknowledged === 'true',
      };
      if (wantsCsv(format, request.headers.accept)) {
        const size = csvReadSize(request.url, limit, MAX_FINDINGS_PAGE);
        const pages = allPages<Finding, FindingKey>(after, (at) =>
          listFindings(db, request.workspaceId, where, { limit: size, after: at }),
        );
        return sendCsv(request, reply, 'findings', csvColumns(findingSchema), pages);
      }
      return toPage(await listFindings(db, request.workspaceId, where, { limit, after }));
    },
  );

  app.get(
    '/api/findings/:id',
    {
      config: { scope: 'read' },
      schema: { params: idParams, response: { 200: findingSchema, 404: errorSchema } },
    },
    async (request, reply) => {
      const finding = await getFinding(db, request.workspaceId, request.params.id);
      if (!finding) return notFound(reply, request.params.id);
      return finding;
    },
  );

  app.post(
    '/api/findings/:id/acknowledge',
    {
      config: { scope: 'admin' },
      schema: {
        description:
          'Acknowledges a finding with a note: it lists as acknowledged (`?acknowledged=true`) and the console marks it. Acknowledging again replaces the note and the time.',
        params: idParams,
        body: z.strictObject({
          note: z
            .string()
            .trim()
            .min(1, 'say why: the note must not be empty')
            .max(MAX_ACKNOWLEDGEMENT_NOTE)
            .describe(`What was done or decided (1..${MAX_ACKNOWLEDGEMENT_NOTE} characters).`),
        }),
        response: { 200: findingSchema, 400: errorSchema, 404: errorSchema },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const finding = await acknowledgeFinding(db, request.workspaceId, id, request.body.note);
      if (!finding) return notFound(reply, id);
      return finding;
    },
  );

  app.delete(
    '/api/findings/:id/acknowledge',
    {
      config: { scope: 'admin' },
      schema: {
        description: 'Takes an acknowledgement back: the finding lists as not acknowledged again.',
        params: idParams,
        response: { 200: findingSchema, 404: errorSchema },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const finding = await unacknowledgeFinding(db, request.workspaceId, id);
      if (!finding) return notFound(reply, id);
      return finding;
    },
  );
});
