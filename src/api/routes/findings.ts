/**
 * GET /api/findings (filters, cursor pagination) and GET /api/findings/:id (DESIGN §8).
 * Both read the caller's workspace only; a finding of another workspace is a 404.
 */
import type { FastifyPluginAsync } from 'fastify';
import { DETECTOR_IDS, type DetectorId, type Severity } from '../../model/findings.ts';
import { getFinding, listFindings, MAX_FINDINGS_PAGE } from '../../store/findings.ts';
import { cursorQuerySchema, readCursor, toPage } from '../cursor.ts';
import type { ApiDeps } from '../types.ts';
import { BadRequestError } from '../validation.ts';

const SEVERITIES = ['info', 'warning', 'critical'] as const;

/** The Finding of DESIGN §8, as JSON schema (also documents the API). */
export const findingSchema = {
  type: 'object',
  required: [
    'id',
    'detector',
    'severity',
    'workspace',
    'conversationId',
    'traceId',
    'spanId',
    'createdAt',
    'updatedAt',
    'summary',
    'details',
  ],
  properties: {
    id: { type: 'string' },
    detector: { type: 'string', enum: [...DETECTOR_IDS] },
    severity: { type: 'string', enum: [...SEVERITIES] },
    kind: { type: ['string', 'null'] },
    workspace: { type: 'string' },
    conversationId: { type: 'string' },
    streamKey: { type: 'string' },
    runId: { type: 'string' },
    anchor: { type: 'string' },
    traceId: { type: 'string' },
    spanId: { type: 'string' },
    model: { type: ['string', 'null'] },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
    summary: { type: 'string' },
    details: { type: 'object', additionalProperties: true },
  },
} as const;

const errorSchema = {
  type: 'object',
  properties: { error: { type: 'string' }, message: { type: 'string' } },
} as const;

interface ListQuery {
  detector?: DetectorId;
  severity?: Severity;
  conversationId?: string;
  runId?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
}

/**
 * A date-time query parameter as a Date. The schema's `date-time` format lets through times
 * no Date holds (a leap second, `23:59:60`): those are a 400 naming the parameter.
 */
function queryTime(name: string, value: string): Date {
  const time = new Date(value);
  if (Number.isNaN(time.getTime()))
    throw new BadRequestError(`querystring/${name} is not a time this API can read`);
  return time;
}

/** The findings routes; `read` scope. */
export const findingsRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  const db = deps.store.db;

  app.get<{ Querystring: ListQuery }>(
    '/api/findings',
    {
      config: { scope: 'read' },
      schema: {
        querystring: {
          type: 'object',
          properties: {
            detector: { type: 'string', enum: [...DETECTOR_IDS] },
            severity: { type: 'string', enum: [...SEVERITIES] },
            conversationId: { type: 'string', minLength: 1, maxLength: 512 },
            runId: { type: 'string', minLength: 1, maxLength: 512 },
            since: { type: 'string', format: 'date-time' },
            until: { type: 'string', format: 'date-time' },
            limit: { type: 'integer', minimum: 1, maximum: MAX_FINDINGS_PAGE, default: 50 },
            cursor: cursorQuerySchema,
          },
          additionalProperties: false,
        },
        response: {
          200: {
            type: 'object',
            required: ['items', 'next'],
            properties: {
              items: { type: 'array', items: findingSchema },
              next: { type: ['string', 'null'] },
            },
          },
          400: errorSchema,
        },
      },
    },
    async (request) => {
      const { limit = 50, cursor, since, until, ...filter } = request.query;
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

  app.get<{ Params: { id: string } }>(
    '/api/findings/:id',
    {
      config: { scope: 'read' },
      schema: {
        params: {
          type: 'object',
          required: ['id'],
          properties: { id: { type: 'string', minLength: 1, maxLength: 64 } },
        },
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
};
