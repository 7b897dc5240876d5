/**
 * GET /api/trends and GET /api/trends/before-after (issue 37 §1): conversations, findings per
 * detector, reported cost and tokens sent over the usage threshold, over time and split by a
 * key; and the same figures before and after a moment (a date, or the first guard decision).
 * The figures are src/model/trends.ts's over src/store/trends.ts's rows.
 */
import { z } from 'zod';
import {
  beforeAfter,
  MAX_TREND_DAYS,
  MIN_CONVERSATIONS,
  rangeStartMs,
  TREND_BUCKETS,
  TREND_KEYS,
  trendItems,
} from '../../model/trends.ts';
import { DETECTOR_IDS } from '../../model/findings.ts';
import { getAlertSettings } from '../../store/alerts.ts';
import { conversationTrends, firstGuardDecisionNs } from '../../store/trends.ts';
import { errorSchema, isoTime } from '../schemas.ts';
import type { ApiDeps } from '../types.ts';
import { BadRequestError, withInputRules } from '../validation.ts';
import { refuse } from '../errors.ts';

const daysQuery = (defaultDays: number, what: string) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_TREND_DAYS)
    .default(defaultDays)
    .describe(`${what}: a whole number of days, 1..${MAX_TREND_DAYS}; default ${defaultDays}.`);

const perDetector = <T extends z.ZodType>(value: T) =>
  z.object(
    Object.fromEntries(DETECTOR_IDS.map((id) => [id, value])) as Record<
      (typeof DETECTOR_IDS)[number],
      T
    >,
  );

const costUsd = z
  .number()
  .nullable()
  .describe(
    "Sum of the costs the producers reported for these conversations' calls (US dollars; Claude Code's `cost_usd`); null when no call reported one. Never priced by rotscope.",
  );

const tokensOverThreshold = z
  .number()
  .describe(
    "Context tokens (input + cache reads + cache writes) sent in calls whose stored usage (context tokens / the call's stored window) is at or above the workspace's usageThreshold: what the rot cost. Calls without a window or token counts add nothing.",
  );

const trendItem = z.object({
  bucket: z.string().describe('The first day of the bucket, YYYY-MM-DD (UTC); a Monday for weeks.'),
  key: z
    .string()
    .nullable()
    .describe(
      'The value of `by` for these conversations: the model of the first main call; the coding agent (Claude Code, ...); the agent with its version; the project. null when they do not say (no project reported; a library or SDK, not a coding agent).',
    ),
  conversations: z.number().describe('Conversations whose first call falls in the bucket.'),
  calls: z.number().describe('All the calls of those conversations.'),
  findings: perDetector(z.number()).describe('Findings of those conversations, per detector.'),
  costUsd,
  tokensOverThreshold,
});

const side = z.object({
  from: isoTime,
  to: isoTime.describe('The side holds conversations whose first call is in [from, to).'),
  conversations: z.number(),
  calls: z.number(),
  findings: perDetector(z.number()),
  per100: perDetector(z.number().nullable()).describe(
    'Findings per 100 conversations, per detector; null without conversations.',
  ),
  costUsd,
  tokensOverThreshold,
  enough: z
    .boolean()
    .describe(`At least ${MIN_CONVERSATIONS} conversations: enough to compare the rates.`),
});

/** The answer of GET /api/trends. */
const trendsSchema = z
  .object({
    from: isoTime.describe('The start of the range: midnight UTC, days - 1 days ago.'),
    to: isoTime.describe('When the answer was made (the end of the range).'),
    usageThreshold: z
      .number()
      .describe('The workspace usage threshold tokensOverThreshold was counted at.'),
    items: z.array(trendItem).describe('By bucket, then key (null last).'),
  })
  .meta({ id: 'Trends' });

/** The answer of GET /api/trends/before-after. */
const beforeAfterSchema = z
  .object({
    at: isoTime,
    atSource: z.enum(['date', 'guard']),
    days: z.number(),
    minConversations: z.number(),
    usageThreshold: z.number(),
    before: side,
    after: side,
    verdict: z.string().describe('Whether there are enough conversations to tell, plainly.'),
  })
  .meta({ id: 'BeforeAfter' });

const NS_PER_MS = 1_000_000n;

/** A moment given as `YYYY-MM-DD` (midnight UTC) or an ISO date-time with an offset. */
const moment = z.union([z.iso.date(), z.iso.datetime({ offset: true }), z.literal('guard')]);

export const trendsRoutes = withInputRules<ApiDeps>(async (app, deps) => {
  const db = deps.store.db;

  app.get(
    '/api/trends',
    {
      config: { scope: 'read' },
      schema: {
        description:
          "Conversations over time, split by a key: per bucket (UTC day or ISO week of each conversation's first call, which carries all its calls, cost and findings), findings per detector, calls, reported cost and tokens over the usage threshold. Buckets without conversations are left out. The same figures are in reporting_v1.conversation_trends and trends_daily.",
        querystring: z.strictObject({
          by: z.enum(TREND_KEYS).default('model').describe('What to split by; default model.'),
          bucket: z.enum(TREND_BUCKETS).default('day').describe('day or week; default day.'),
          days: daysQuery(30, 'How far back, counting today (UTC)'),
        }),
        response: {
          200: trendsSchema,
          400: errorSchema,
        },
      },
    },
    async (request) => {
      const { by, bucket, days } = request.query;
      const nowMs = Date.now();
      const fromMs = rangeStartMs(nowMs, days);
      const { thresholds } = await getAlertSettings(db, request.workspaceId);
      const rows = await conversationTrends(db, request.workspaceId, {
        sinceNs: BigInt(fromMs) * NS_PER_MS,
        untilNs: BigInt(nowMs + 1) * NS_PER_MS,
        usageThreshold: thresholds.usageThreshold,
      });
      return {
        from: new Date(fromMs).toISOString(),
        to: new Date(nowMs).toISOString(),
        usageThreshold: thresholds.usageThreshold,
        items: trendItems(rows, by, bucket),
      };
    },
  );

  app.get(
    '/api/trends/before-after',
    {
      config: { scope: 'read' },
      schema: {
        description: `Did the change help: the conversations begun in the \`days\` days before a moment against those begun in the \`days\` days from it, each side with its counts and findings per 100 conversations. A side with fewer than ${MIN_CONVERSATIONS} conversations is too few to tell, and the verdict says so.`,
        querystring: z.strictObject({
          at: moment.describe(
            'The moment: a date (YYYY-MM-DD, midnight UTC), a date-time with an offset, or `guard` for the first guard decision stored.',
          ),
          days: daysQuery(14, 'The length of each side'),
        }),
        response: {
          200: beforeAfterSchema,
          400: errorSchema,
          404: errorSchema,
        },
      },
    },
    async (request, reply) => {
      const { at, days } = request.query;
      let atMs: number;
      if (at === 'guard') {
        const ns = await firstGuardDecisionNs(db, request.workspaceId);
        if (ns === null)
          return refuse(
            reply,
            'not_found',
            'no guard decision is stored in this workspace: pick a date instead',
          );
        atMs = Number(ns / NS_PER_MS);
      } else {
        atMs = Date.parse(at.length === 10 ? `${at}T00:00:00Z` : at);
        if (Number.isNaN(atMs))
          throw new BadRequestError(`querystring/at is not a time this API can read (${at})`);
      }
      const { thresholds } = await getAlertSettings(db, request.workspaceId);
      const dayNs = 86_400_000n * NS_PER_MS;
      const atNs = BigInt(atMs) * NS_PER_MS;
      const rows = await conversationTrends(db, request.workspaceId, {
        sinceNs: atNs - BigInt(days) * dayNs,
        untilNs: atNs + BigInt(days) * dayNs,
        usageThreshold: thresholds.usageThreshold,
      });
      return {
        at: new Date(atMs).toISOString(),
        atSource: at === 'guard' ? ('guard' as const) : ('date' as const),
        days,
        minConversations: MIN_CONVERSATIONS,
        usageThreshold: thresholds.usageThreshold,
        ...beforeAfter(rows, atMs, days),
      };
    },
  );
});
