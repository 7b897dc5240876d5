/** GET /api/conversations, /api/conversations/:id, /api/runs/:runId and /api/coverage. */
import { z } from 'zod';
import { DETECTOR_IDS } from '../../model/findings.ts';
import { getConversation, getCoverage, getRun, listConversations } from '../../store/browse.ts';
import { readCursor, toPage } from '../cursor.ts';
import { cursorQuery, errorSchema, isoTime, limitQuery, pageOf } from '../schemas.ts';
import type { ApiDeps } from '../types.ts';
import { withInputRules } from '../validation.ts';

const idParams = z.strictObject({ id: z.string().min(1).max(512) });

const conversationSummary = z.object({
  id: z.string(),
  calls: z.number(),
  firstCallAt: isoTime.nullable(),
  lastCallAt: isoTime.nullable(),
  maxContextTokens: z.number().nullable(),
  fullestShare: z
    .number()
    .nullable()
    .describe("The fullest call's usage as a share of its window; null when no call knows both."),
  models: z.array(z.string()),
  streams: z.number(),
  findings: z.number(),
  streamList: z
    .array(
      z.object({
        key: z.string(),
        kind: z.enum(['main', 'sub-agent']),
        agentId: z.string().nullable(),
        calls: z.number(),
        sideCalls: z.number().describe('Calls beside the main loop (compaction, titles, ...).'),
      }),
    )
    .describe('The main thread first, then each sub-agent.'),
  sideCalls: z.number(),
  runCount: z.number(),
  runs: z
    .array(z.object({ id: z.string(), calls: z.number(), firstCallAt: isoTime.nullable() }))
    .describe('The first 50 runs by start.'),
});

/** A conversation or a run: its LLM calls and compactions in start order (model shapes). */
const callsAndCompactions = z.object({
  id: z.string(),
  calls: z.array(z.unknown()).describe('LLM calls (src/model/calls.ts LlmCall), by start time.'),
  compactions: z
    .array(z.unknown())
    .describe('Compactions (src/model/calls.ts Compaction), by time.'),
});

const detectorCoverage = z.object({
  covered: z.number().describe('Calls that carry what the detector needs.'),
  share: z.number().describe('covered / calls (0 when there are no calls).'),
  needs: z.string(),
  hint: z.string().describe('What to send so the detector sees the calls it misses.'),
});

const producerCoverage = z.object({
  producer: z.string().describe('The producer convention of the calls (llm_calls.producer).'),
  calls: z.number(),
  covered: z.object(
    Object.fromEntries(DETECTOR_IDS.map((id) => [id, z.number()])) as Record<
      (typeof DETECTOR_IDS)[number],
      z.ZodNumber
    >,
  ),
  blind: z
    .array(z.enum(DETECTOR_IDS))
    .describe('Detectors that see none of these calls (e.g. output_cut_off: no finish reason).'),
});

const coverageSchema = z.object({
  calls: z.number(),
  conversations: z.number(),
  compactions: z.number(),
  producers: z.array(producerCoverage),
  detectors: z.object(
    Object.fromEntries(DETECTOR_IDS.map((id) => [id, detectorCoverage])) as Record<
      (typeof DETECTOR_IDS)[number],
      typeof detectorCoverage
    >,
  ),
});

export const conversationsRoutes = withInputRules<ApiDeps>(async (app, deps) => {
  const db = deps.store.db;

  app.get(
    '/api/conversations',
    {
      config: { scope: 'read' },
      schema: {
        querystring: z.strictObject({
          limit: limitQuery(500),
          cursor: cursorQuery,
          q: z
            .string()
            .min(1)
            .max(512)
            .optional()
            .describe(
              'Only conversations whose id, or a run or trace id of theirs, contains this.',
            ),
        }),
        response: { 200: pageOf(conversationSummary), 400: errorSchema },
      },
    },
    async (request) =>
      toPage(
        await listConversations(db, request.workspaceId, {
          limit: request.query.limit,
          after: readCursor(request.query.cursor, ['bigint', 'text']),
          search: request.query.q,
        }),
      ),
  );

  app.get(
    '/api/conversations/:id',
    {
      config: { scope: 'read' },
      schema: { params: idParams, response: { 200: callsAndCompactions, 404: errorSchema } },
    },
    async (request, reply) => {
      const found = await getConversation(db, request.workspaceId, request.params.id);
      if (!found)
        return reply
          .code(404)
          .send({ error: 'not_found', message: `no conversation "${request.params.id}"` });
      return { id: request.params.id, ...found };
    },
  );

  app.get(
    '/api/runs/:id',
    {
      config: { scope: 'read' },
      schema: { params: idParams, response: { 200: callsAndCompactions, 404: errorSchema } },
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
    async (request) => getCoverage(db, request.workspaceId),
  );
});
