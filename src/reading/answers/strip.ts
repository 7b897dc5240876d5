/**
 * The answer of `GET /api/conversations/:id/strip` and `GET /api/runs/:id/strip`: the context
 * growth strip (src/reading/strip.ts builds all but `id`, `scope`, `thresholds` and `bands`, which
 * the route adds from the workspace's knobs). Named `Strip` in the OpenAPI document.
 */
import { z } from 'zod';

const count = z.number().nullable();
const indexColumn = (what: string) =>
  z.array(z.number()).describe(`Index into ${what}; -1 for none.`);

export const stripSchema = z
  .object({
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
  })
  .meta({ id: 'Strip' });

/** The strip as the API returns it. */
export type Strip = z.infer<typeof stripSchema>;
