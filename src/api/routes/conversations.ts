/**
 * GET /api/conversations, /api/conversations/:id, /api/runs/:runId and /api/coverage (with the
 * requests refused for their token lately: src/reading/refusals.ts).
 */
import { z } from 'zod';
import {
  conversationSchema,
  conversationSummarySchema,
  runSchema,
} from '../../model/conversations.ts';
import { getRun } from '../../store/browse.ts';
import { coverageSchema } from '../../reading/answers/coverage.ts';
import { conversationDetail, conversationPages } from '../../reading/conversations.ts';
import { getCoverage } from '../../reading/coverage.ts';
import { refusalsOf } from '../../reading/refusals.ts';
import { allPages, csvColumns, csvReadSize, FORMAT_VALUES, sendCsv, wantsCsv } from '../csv.ts';
import { readCursor, toPage } from '../cursor.ts';
import { cursorQuery, errorSchema, limitQuery, pageOf } from '../schemas.ts';
import type { ApiDeps } from '../types.ts';
import { withInputRules } from '../validation.ts';
import { refuse } from '../errors.ts';

const idParams = z.strictObject({ id: z.string().min(1).max(512) });

/** Largest page of `GET /api/conversations`. */
const MAX_CONVERSATIONS_PAGE = 500;

async function coverageOf(deps: ApiDeps, workspaceId: string, admin: boolean) {
  const db = deps.store.db;
  const [coverage, refused] = await Promise.all([
    getCoverage(db, workspaceId),
    refusalsOf(db, workspaceId, admin),
  ]);
  return { refusals: refused, ...coverage };
}

export const conversationsRoutes = withInputRules<ApiDeps>(async (app, deps) => {
  const db = deps.store.db;

  app.get(
    '/api/conversations',
    {
      config: { scope: 'read' },
      schema: {
        description:
          'Conversations, most recently active first, a page at a time. With `Accept: text/csv` or `?format=csv` the answer is CSV instead: a header row (the fields below, `id` first; lists joined by `; `, objects as JSON), one row per conversation of every page, `q` applied, streamed.',
        querystring: z.strictObject({
          limit: limitQuery(MAX_CONVERSATIONS_PAGE).describe(
            'Page size (1..500, default 50); for CSV, how many rows are read at a time (default 500; every page is sent).',
          ),
          cursor: cursorQuery,
          q: z
            .string()
            .min(1)
            .max(512)
            .optional()
            .describe(
              'Only conversations whose id, a run or trace id of theirs, or their project (folder or repository) contains this.',
            ),
          format: z
            .enum(FORMAT_VALUES)
            .optional()
            .describe(
              'csv: every matching conversation (all pages) as CSV, as `Accept: text/csv` asks; json (default).',
            ),
        }),
        produces: ['application/json', 'text/csv'],
        response: { 200: pageOf(conversationSummarySchema), 400: errorSchema },
      },
    },
    async (request, reply) => {
      const after = readCursor(request.query.cursor, ['bigint', 'text']);
      const page = await conversationPages(db, request.workspaceId, request.query.q);
      if (wantsCsv(request.query.format, request.headers.accept)) {
        const size = csvReadSize(request.url, request.query.limit, MAX_CONVERSATIONS_PAGE);
        const pages = allPages(after, (at) => page(size, at));
        return sendCsv(
          request,
          reply,
          'conversations',
          csvColumns(conversationSummarySchema),
          pages,
        );
      }
      return toPage(await page(request.query.limit, after));
    },
  );

  app.get(
    '/api/conversations/:id',
    {
      config: { scope: 'read' },
      schema: {
        params: idParams,
        response: {
          200: conversationSchema,
          404: errorSchema,
        },
      },
    },
    async (request, reply) => {
      const found = await conversationDetail(db, request.workspaceId, request.params.id);
      if (!found) return refuse(reply, 'not_found', `no conversation "${request.params.id}"`);
      return found;
    },
  );

  app.get(
    '/api/runs/:id',
    {
      config: { scope: 'read' },
      schema: { params: idParams, response: { 200: runSchema, 404: errorSchema } },
    },
    async (request, reply) => {
      const found = await getRun(db, request.workspaceId, request.params.id);
      if (!found) return refuse(reply, 'not_found', `no run "${request.params.id}"`);
      return { id: request.params.id, ...found };
    },
  );

  app.get(
    '/api/coverage',
    { config: { scope: 'read' }, schema: { response: { 200: coverageSchema } } },
    async (request) => coverageOf(deps, request.workspaceId, request.scope === 'admin'),
  );
});
