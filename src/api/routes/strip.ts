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
import { loadStripView } from '../../reading/strip.ts';
import { loadWhatWasLost } from '../../reading/what-was-lost.ts';
import { errorSchema, isoTime } from '../schemas.ts';
import type { ApiDeps } from '../types.ts';
import { withInputRules } from '../validation.ts';
import { refuse } from '../errors.ts';

const idParams = z.strictObject({ id: z.string().min(1).max(512) });

const count = z.number().nullable();
const indexColumn = (what: string) =>
  z.array(z.number()).describe(`Index into ${what}; -1 for none.`);

const stripSchema = z.object({
  id: z.string(),
  scope: z.enum(['conversation', 'run']),
  calls: z.number(),
  truncated: z.boolean().describe('More calls exist than the strip returns (100,000).'),
  startedAt: z.number().nullable().describe('The first call start, Unix milliseconds.'),
  models: z.array(z.string()),
  windowSources: z.array(z.string()),
  finishReasons: z.array(z.string()),
  sideCalls: z.array(z.string()),
  streams: z.array(z.object({ key: z.string(), agentId: z.string().nullable() })),
  parts: z
    .array(z.string())
    .describe('Part names: system, messages, other, tool:<name>; `columns.parts` index them.'),
  columns: z
    .object({
      startMs: z.array(z.number()).describe('Milliseconds after the first call start.'),
      model: indexColumn('models'),
      input: z.array(count),
      cacheRead: z.array(count),
      cacheWrite: z.array(count),
      output: z.array(count),
      context: z.array(count).describe('Input + cache read + cache write: the usage.'),
      window: z.array(count),
      windowSource: indexColumn('windowSources'),
      finish: indexColumn('finishReasons'),
      stream: indexColumn('streams'),
      side: indexColumn('sideCalls'),
      parts: z
        .array(z.array(z.number()).nullable())
        .describe('Per call, flat pairs [partIndex, tokens, ...]; null when sizes are unknown.'),
    })
    .describe('One array per field, one entry per call in start order.'),
  findings: z.array(
    z.object({
      findingId: z.string(),
      index: z
        .number()
        .nullable()
        .describe(
          'The call its text is about: the fullest call for context_too_full, else the call it is anchored on.',
        ),
      calls: z
        .array(z.number())
        .describe("Every call its text counts (a tool_takeover's episode), in strip order."),
      detector: z.string(),
      severity: z.string(),
      kind: z.string().nullable(),
      tokensLost: z.number().nullable(),
      summary: z.string(),
    }),
  ),
  guard: z
    .array(
      z.object({
        index: z
          .number()
          .nullable()
          .describe(
            'The call that first carried what the guard acted on (the next call after it); null when not in the strip.',
          ),
        action: z.enum(['narrowed', 'warned']),
        tool: z.string(),
        resultTokens: z
          .number()
          .describe('Estimated tokens of the whole result (narrowed: of the whole file).'),
        budgetTokens: z.number(),
        keptOutTokens: z.number().describe('Tokens kept out of the context (warned: 0).'),
      }),
    )
    .describe("What Claude Code's tool-result guard did in the conversation, oldest first."),
  thresholds: z.object({ usageThreshold: z.number(), usageCritical: z.number() }),
  bands: z
    .object({ dimBelow: z.number(), amberFrom: z.number(), redFrom: z.number() })
    .describe(
      "A call's colour by its usage share, from the workspace's knobs: dim below dimBelow, amber from amberFrom (usageThreshold), red from redFrom (usageCritical).",
    ),
});

const callEnd = z.object({
  traceId: z.string(),
  spanId: z.string(),
  tokens: count,
  window: count,
  model: z.string().nullable(),
  startedAt: isoTime.nullable(),
});

const whatWasLostSchema = z.object({
  findingId: z.string(),
  conversationId: z.string(),
  runId: z.string(),
  streamKey: z.string(),
  kind: z.enum(['compacted', 'lost']),
  severity: z.string(),
  summary: z.string(),
  tokensLost: count,
  dropRatio: count,
  before: callEnd,
  after: callEnd,
  partsLost: z.array(
    z.object({ part: z.string(), name: z.string().nullable(), tokens: z.number() }),
  ),
  producer: z.string().nullable(),
  dropped: z.object({
    contentCaptured: z.boolean(),
    count: count,
    messages: z.array(
      z.object({
        role: z.string(),
        chars: z.number(),
        text: z.string().nullable(),
        tool: z.string().nullable(),
      }),
    ),
    chars: count,
  }),
  replacement: z
    .object({
      kind: z.string(),
      trigger: z.string().nullable(),
      evidence: z.string(),
      tokensBefore: count,
      tokensAfter: count,
      messagesKept: count,
      summarySize: count,
      summary: z.string().nullable(),
    })
    .nullable(),
  systemPrompt: z.object({
    before: count,
    after: count,
    unit: z.string().nullable(),
    change: z.string().nullable(),
    estimated: z.boolean(),
    recorded: z.boolean(),
    textBefore: z.string().nullable(),
    textAfter: z.string().nullable(),
  }),
});

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
