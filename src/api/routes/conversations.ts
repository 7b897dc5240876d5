/**
 * GET /api/conversations, /api/conversations/:id, /api/runs/:runId and /api/coverage (with the
 * requests refused for their token lately: src/reading/refusals.ts).
 */
import { z } from 'zod';
import { DETECTOR_IDS } from '../../model/findings.ts';
import { getRun } from '../../store/browse.ts';
import { conversationDetail, conversationPages } from '../../reading/conversations.ts';
import { getCoverage, type Coverage } from '../../reading/coverage.ts';
import { refusalsOf } from '../../reading/refusals.ts';
import { allPages, csvColumns, csvReadSize, FORMAT_VALUES, sendCsv, wantsCsv } from '../csv.ts';
import { readCursor, toPage } from '../cursor.ts';
import { cursorQuery, errorSchema, isoTime, limitQuery, pageOf } from '../schemas.ts';
import type { ApiDeps } from '../types.ts';
import { withInputRules } from '../validation.ts';
import { refuse } from '../errors.ts';

const idParams = z.strictObject({ id: z.string().min(1).max(512) });

const guardSummarySchema = z
  .object({
    narrowed: z.number().describe('Whole-file Reads the guard narrowed to a range.'),
    warned: z.number().describe('Results over their budget the model was told about.'),
    keptOutTokens: z
      .number()
      .describe('Tokens the narrowed reads kept out of the context (bytes / 4).'),
    tools: z.array(
      z.object({
        tool: z.string(),
        narrowed: z.number(),
        warned: z.number(),
        keptOutTokens: z.number(),
      }),
    ),
  })
  .nullable()
  .describe("What Claude Code's tool-result guard did in this conversation; null when nothing.");

const costUsdSchema = z
  .number()
  .nullable()
  .describe(
    "What its calls cost in US dollars, summed over the calls whose producer reported a cost (Claude Code's `cost_usd` on each `api_request` event); null when none did. rotscope never prices a call itself.",
  );

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
  windowUnknown: z
    .array(z.string())
    .describe(
      'Models of its calls with token counts and no window (no source knows it, no window override covers it): context_too_full does not judge those calls; the console says "window unknown".',
    ),
  agent: z
    .string()
    .nullable()
    .describe(
      'The coding agent that ran it, with its version when sent ("Claude Code 2.1.332"); null for a library or SDK.',
    ),
  project: z
    .string()
    .nullable()
    .describe(
      'Where it runs: the working directory or repository its producer last reported; null when none did.',
    ),
  producers: z.array(z.string()).describe('The producer conventions of its calls.'),
  guard: guardSummarySchema,
  costUsd: costUsdSchema,
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

const evaluationSchema = z
  .object({
    pending: z
      .boolean()
      .describe(
        'Calls or compactions arrived that the detectors have not judged yet; false once its findings are settled for everything stored.',
      ),
    judgedThrough: isoTime
      .nullable()
      .describe('The start of the furthest call the detectors have judged; null before the first.'),
    error: z
      .string()
      .nullable()
      .describe('Why the last evaluation failed, while the evaluator retries it; null otherwise.'),
  })
  .describe(
    'Where the evaluation of this conversation stands: poll until pending is false to read settled findings.',
  );

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
  agent: z
    .string()
    .nullable()
    .describe('The coding agent behind the producer (Claude Code, Codex CLI, Gemini CLI), if one.'),
  hints: z
    .partialRecord(z.enum(DETECTOR_IDS), z.string())
    .describe(
      "Per detector that misses some of these calls: what to turn on, in the producer's words.",
    ),
  limits: z
    .partialRecord(z.enum(DETECTOR_IDS), z.string())
    .optional()
    .describe(
      'Per detector: what the coding agent cannot send whatever is turned on (Qwen Code: a tool call cut at the output limit).',
    ),
});

const modelWindow = z.object({
  model: z.string().nullable().describe('The response model, else the request model.'),
  window: z
    .number()
    .nullable()
    .describe(
      'The window these calls are judged on; null when no rule knows the model (context_too_full does not judge them: add a window override).',
    ),
  windowSource: z
    .string()
    .nullable()
    .describe(
      'Where the window came from: override (a workspace override), model_id ([1m] in the id), agent (the agent reports it, e.g. Codex), inferred (usage above a window), catalog (for the agent version), assumed (the id does not settle it); null with no window.',
    ),
  calls: z.number(),
  lastCallAt: isoTime.nullable(),
});

const claudeCodeVersion = z.object({
  version: z
    .string()
    .describe('service.version of Claude Code spans and log events, or a transcript version.'),
  status: z
    .enum(['verified', 'supported', 'older', 'newer', 'unknown'])
    .describe(
      'verified: its real output is tested; supported: between the oldest supported and the newest verified; newer: after the newest verified; older: before the oldest supported.',
    ),
  calls: z.number(),
  conversations: z.number(),
  lastCallAt: isoTime.nullable(),
});

const refusal = z.object({
  workspace: z
    .string()
    .nullable()
    .describe('The workspace of the token refused (a 403); null when no token told one'),
  status: z.number().describe('401 (no token, an unknown or revoked one) or 403 (wrong scope)'),
  route: z.string().describe('Method and route, e.g. `POST /v1/logs`'),
  reason: z
    .string()
    .describe(
      'missing_token, malformed_header, unknown_token, session_ended, scope:<has>:<needs>, host_refused, origin_refused or other',
    ),
  reasonText: z.string(),
  agent: z
    .string()
    .describe(
      "The first word of the sender's User-Agent (`OTel-OTLP-Exporter-JavaScript`, `curl`, `browser`)",
    ),
  count: z.number(),
  firstSeen: isoTime,
  lastSeen: isoTime,
  hint: z.string().describe('What to do so the sender gets through'),
  settled: z
    .boolean()
    .describe(
      'The workspace accepted new data after this refusal was last seen (`acceptedAt`): its cause is likely fixed',
    ),
});

const refusals = z
  .object({
    since: isoTime,
    items: z
      .array(refusal)
      .describe(
        "Refused requests since `since`, last seen first: the workspace's, and (for an admin token) those of no workspace",
      ),
    acceptedAt: isoTime
      .nullable()
      .describe(
        'When the workspace last accepted new data (null: never). A refusal last seen before it is `settled`: the Coverage page shows it calm, with its age, instead of as an alarm; a newer refusal makes it an alarm again',
      ),
    withoutWorkspace: z
      .object({ count: z.number(), lastSeen: isoTime.nullable(), settled: z.boolean() })
      .nullable()
      .describe(
        'Refusals of no workspace (no token, an unknown one), counted only: listed for admin tokens; null when listed or none',
      ),
  })
  .describe(
    'Requests refused for their token in the last 7 days: an exporter sending no token or a wrong one loses its data',
  );

const coverageSchema = z.object({
  refusals,
  calls: z.number(),
  conversations: z.number(),
  compactions: z.number(),
  producers: z.array(producerCoverage),
  recentSince: isoTime
    .nullable()
    .describe(
      'Models and Claude Code versions are of calls since then (30 days before the newest).',
    ),
  models: z
    .array(modelWindow)
    .describe(
      'Each model of the recent calls with its window and source (a row per window it was given), by model, most calls first. Windows reflect the current window overrides.',
    ),
  modelsWithoutWindow: z
    .array(z.string())
    .describe(
      'Models of recent calls that no rule gives a window: context_too_full does not judge them.',
    ),
  windowsUnknown: z
    .array(
      z.object({
        model: z.string(),
        calls: z.number().describe('Its stored calls with token counts that get no window.'),
      }),
    )
    .describe(
      "The models whose stored calls carry token counts but get no window under the current overrides (context_too_full does not judge them), most calls first; context_too_full's hint names them and the window override that fixes it.",
    ),
  claudeCode: z.object({
    oldestSupported: z.string(),
    newestVerified: z.string(),
    verified: z.array(z.string()),
    versions: z
      .array(claudeCodeVersion)
      .describe('The Claude Code versions of recent calls, newest first.'),
    warning: z
      .string()
      .nullable()
      .describe(
        'Set when a version seen is newer than the newest verified, or older than the oldest supported.',
      ),
  }),
  detectors: z.object(
    Object.fromEntries(DETECTOR_IDS.map((id) => [id, detectorCoverage])) as Record<
      (typeof DETECTOR_IDS)[number],
      typeof detectorCoverage
    >,
  ),
});

/** Largest page of `GET /api/conversations`. */
const MAX_CONVERSATIONS_PAGE = 500;

async function coverageOf(deps: ApiDeps, workspaceId: string, admin: boolean) {
  const db = deps.store.db;
  const [coverage, refused] = await Promise.all([
    getCoverage(db, workspaceId),
    refusalsOf(db, workspaceId, admin),
  ]);
  return { refusals: refused, ...coverage } satisfies Coverage & { refusals: unknown };
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
        response: { 200: pageOf(conversationSummary), 400: errorSchema },
      },
    },
    async (request, reply) => {
      const after = readCursor(request.query.cursor, ['bigint', 'text']);
      const page = await conversationPages(db, request.workspaceId, request.query.q);
      if (wantsCsv(request.query.format, request.headers.accept)) {
        const size = csvReadSize(request.url, request.query.limit, MAX_CONVERSATIONS_PAGE);
        const pages = allPages(after, (at) => page(size, at));
        return sendCsv(request, reply, 'conversations', csvColumns(conversationSummary), pages);
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
          200: callsAndCompactions.extend({
            guard: guardSummarySchema,
            costUsd: costUsdSchema,
            project: z
              .string()
              .nullable()
              .describe('Where it runs (working directory or repository); null when unknown.'),
            evaluation: evaluationSchema,
          }),
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
      schema: { params: idParams, response: { 200: callsAndCompactions, 404: errorSchema } },
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
