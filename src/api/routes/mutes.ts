/**
 * Mutes (issue 37 §3): `POST /api/mutes {detector?, project?, model?, until?, note?}`,
 * `GET /api/mutes`, `DELETE /api/mutes/:id`. A mute matches a new finding on every field it
 * sets (the project exactly as stored on the finding's conversation); a matching finding is
 * stored and listed, and its deliveries are written `muted` instead of being sent
 * (src/store/mutes.ts, src/store/deliveries.ts). Changing mutes needs `admin` scope; listing
 * them `read`, as every other list.
 */
import { z } from 'zod';
import { DETECTOR_IDS } from '../../model/findings.ts';
import { createMute, deleteMute, listMutes, MAX_MUTES_PAGE } from '../../store/mutes.ts';
import { readCursor, toPage } from '../cursor.ts';
import { bigintId, cursorQuery, errorSchema, isoTime, limitQuery, pageOf } from '../schemas.ts';
import type { ApiDeps } from '../types.ts';
import { BadRequestError, withInputRules } from '../validation.ts';
import { refuse } from '../errors.ts';

/** Longest note a mute keeps (characters). */
const MAX_MUTE_NOTE = 2000;

const muteSchema = z
  .object({
    id: z.string(),
    detector: z.enum(DETECTOR_IDS).nullable().describe('The detector it matches; null: any.'),
    project: z
      .string()
      .nullable()
      .describe("The conversation's project it matches, exactly as stored; null: any."),
    model: z.string().nullable().describe("The finding's model it matches, exactly; null: any."),
    until: isoTime.nullable().describe('When it stops holding; null: until deleted.'),
    note: z.string().nullable(),
    createdAt: isoTime,
    active: z.boolean().describe('False once `until` has passed: it matches nothing any more.'),
  })
  .meta({ id: 'Mute' });

const createBody = z
  .strictObject({
    detector: z.enum(DETECTOR_IDS).optional(),
    project: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe('The working directory or repository URL, exactly as the findings show it.'),
    model: z.string().min(1).max(512).optional(),
    until: z.iso
      .datetime({ offset: true })
      .optional()
      .describe('When it stops holding (a time in the future); absent: until deleted.'),
    note: z.string().max(MAX_MUTE_NOTE).optional().describe('Why it is muted.'),
  })
  .refine(
    (body) => body.detector !== undefined || body.project !== undefined || body.model !== undefined,
    {
      message:
        'a mute must match on at least one of detector, project or model (one with none would mute every finding)',
    },
  );

export const mutesRoutes = withInputRules<ApiDeps>(async (app, deps) => {
  const db = deps.store.db;

  app.post(
    '/api/mutes',
    {
      config: { scope: 'admin' },
      schema: {
        description:
          'Mutes the new findings that match every field given (at least one of detector, project, model): they are stored and listed, and their deliveries are written with status `muted` instead of being sent.',
        body: createBody,
        response: { 201: muteSchema, 400: errorSchema },
      },
    },
    async (request, reply) => {
      const { until, ...draft } = request.body;
      let untilTime: Date | undefined;
      if (until !== undefined) {
        untilTime = new Date(until);
        if (Number.isNaN(untilTime.getTime()))
          throw new BadRequestError('body/until is not a time this API can read');
        if (untilTime.getTime() <= Date.now())
          throw new BadRequestError(
            `body/until is in the past (${untilTime.toISOString()}): such a mute would match nothing`,
          );
      }
      const mute = await createMute(db, request.workspaceId, { ...draft, until: untilTime });
      return reply.code(201).send(mute);
    },
  );

  app.get(
    '/api/mutes',
    {
      config: { scope: 'read' },
      schema: {
        description: 'The mutes, newest first, those whose `until` has passed included.',
        querystring: z.strictObject({ limit: limitQuery(MAX_MUTES_PAGE), cursor: cursorQuery }),
        response: { 200: pageOf(muteSchema), 400: errorSchema },
      },
    },
    async (request) => {
      const after = readCursor(request.query.cursor, ['bigint']);
      return toPage(
        await listMutes(db, request.workspaceId, { limit: request.query.limit, after }),
      );
    },
  );

  app.delete(
    '/api/mutes/:id',
    {
      config: { scope: 'admin' },
      schema: {
        description:
          'Deletes a mute: findings made from now on are sent again (those it held back stay `muted`).',
        params: z.strictObject({ id: bigintId }),
        response: { 204: z.void().describe('Deleted.'), 404: errorSchema },
      },
    },
    async (request, reply) => {
      const deleted = await deleteMute(db, request.workspaceId, request.params.id);
      if (!deleted) return refuse(reply, 'not_found', `no mute "${request.params.id}"`);
      return reply.code(204).send();
    },
  );
});
