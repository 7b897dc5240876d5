/**
 * GET /api/conversations, /api/conversations/:id, /api/runs/:runId and /api/coverage (with the
 * requests refused for their token lately: src/api/refusals.ts).
 */
import { guardSummary } from '../../store/guard-decisions.ts';
import { evaluationStatus, projectsOf } from '../../store/conversations.ts';
import { nsToIso } from '../../model/telemetry.ts';
import {
  conversationSchema,
  conversationSummarySchema,
  runSchema,
} from '../../model/conversations.ts';
import { z } from 'zod';
import {
  conversationCost,
  getConversation,
  getRun,
  listConversations,
  type ConversationKey,
} from '../../store/browse.ts';
import { coverageSchema } from '../../reading/answers/coverage.ts';
import { getCoverage } from '../../reading/coverage.ts';
import { overrideWindow } from '../../ingest/windows.ts';
import { getAlertSettings } from '../../store/alerts.ts';
import {
  lastAcceptedIngest,
  NO_WORKSPACE,
  recentRefusals,
  refusalsWithoutWorkspace,
} from '../../store/refusals.ts';
import { allPages, csvColumns, csvReadSize, FORMAT_VALUES, sendCsv, wantsCsv } from '../csv.ts';
import { readCursor, toPage } from '../cursor.ts';
import { reasonText, refusalHint } from '../refusals.ts';
import { cursorQuery, errorSchema, limitQuery, pageOf } from '../schemas.ts';
import type { ApiDeps } from '../types.ts';
import { withInputRules } from '../validation.ts';

const idParams = z.strictObject({ id: z.string().min(1).max(512) });

/** Largest page of `GET /api/conversations`. */
const MAX_CONVERSATIONS_PAGE = 500;

/** How far back the Coverage page lists refused requests. */
const REFUSALS_DAYS = 7;

/**
 * The recent refusals a caller may see: its workspace's; those of no workspace (requests
 * without a valid token, which belong to nobody) listed for an admin token only, else
 * counted. Nothing kept is secret (src/api/refusals.ts), but which routes and senders are
 * refused is an operator's business on a server several workspaces share.
 */
async function refusalsOf(deps: ApiDeps, workspaceId: string, admin: boolean) {
  const db = deps.store.db;
  const since = new Date(Date.now() - REFUSALS_DAYS * 24 * 60 * 60 * 1000);
  const [rows, without, accepted] = await Promise.all([
    recentRefusals(db, { workspaceId, since, withoutWorkspace: admin }),
    admin ? undefined : refusalsWithoutWorkspace(db, since),
    lastAcceptedIngest(db, workspaceId),
  ]);
  // Data accepted after a refusal: the sender (or one like it) got through since, so the refusal
  // is history, not a lockout going on. A newer refusal is not settled, and alarms again.
  const settled = (lastSeen: Date | null) =>
    accepted !== null && lastSeen !== null && lastSeen < accepted;
  return {
    since: since.toISOString(),
    acceptedAt: accepted?.toISOString() ?? null,
    items: rows.map((row) => ({
      workspace: row.workspaceId === NO_WORKSPACE ? null : row.workspaceId,
      status: row.status,
      route: row.route,
      reason: row.reason,
      reasonText: reasonText(row.reason),
      agent: row.agent,
      count: row.count,
      firstSeen: row.firstSeen.toISOString(),
      lastSeen: row.lastSeen.toISOString(),
      hint: refusalHint(row, workspaceId),
      settled: settled(row.lastSeen),
    })),
    withoutWorkspace:
      without && without.count > 0
        ? {
            count: without.count,
            lastSeen: without.lastSeen?.toISOString() ?? null,
            settled: settled(without.lastSeen),
          }
        : null,
  };
}

async function coverageOf(deps: ApiDeps, workspaceId: string, admin: boolean) {
  const db = deps.store.db;
  const [coverage, refused] = await Promise.all([
    getCoverage(db, workspaceId),
    refusalsOf(deps, workspaceId, admin),
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
      // a model an override covers now is judged (the evaluator applies overrides as it reads)
      const { windowOverrides } = await getAlertSettings(db, request.workspaceId);
      const unknown = (model: string) => overrideWindow(model, windowOverrides) === null;
      const page = async (limit: number, at: ConversationKey | undefined) => {
        const found = await listConversations(db, request.workspaceId, {
          limit,
          after: at,
          search: request.query.q,
        });
        return {
          ...found,
          items: found.items.map((c) => ({ ...c, windowUnknown: c.windowUnknown.filter(unknown) })),
        };
      };
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
      const found = await getConversation(db, request.workspaceId, request.params.id);
      if (!found)
        return reply
          .code(404)
          .send({ error: 'not_found', message: `no conversation "${request.params.id}"` });
      const guard = await guardSummary(db, request.workspaceId, request.params.id);
      const projects = await projectsOf(db, request.workspaceId, [request.params.id]);
      const status = await evaluationStatus(db, request.workspaceId, request.params.id);
      const costUsd = await conversationCost(db, request.workspaceId, request.params.id);
      return {
        id: request.params.id,
        ...found,
        guard,
        costUsd,
        project: projects.get(request.params.id) ?? null,
        evaluation: {
          pending: status?.pending ?? true,
          judgedThrough: nsToIso(status?.judgedNs ?? null),
          error: status?.error ?? null,
        },
      };
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
      if (!found)
        return reply
          .code(404)
          .send({ error: 'not_found', message: `no run "${request.params.id}"` });
      return { id: request.params.id, ...found };
    },
  );

  app.get(
    '/api/coverage',
    { config: { scope: 'read' }, schema: { response: { 200: coverageSchema } } },
    async (request) => coverageOf(deps, request.workspaceId, request.scope === 'admin'),
  );
});
