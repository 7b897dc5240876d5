/**
 * The answers about conversations and runs (`GET /api/conversations`, `/api/conversations/:id`,
 * `/api/runs/:id`): the store reads the summaries, the guard's work and the calls
 * (src/store/browse.ts, src/store/guard-decisions.ts) and the routes answer with them, so the
 * schemas live in the layer both import. Named in the OpenAPI document: `ConversationSummary`,
 * `GuardSummary`, `Conversation`, `Run`.
 */
import { z } from 'zod';
import type { Compaction, LlmCall } from './calls.ts';
import { isoTime } from './findings.ts';

/** What Claude Code's tool-result guard did in a conversation. */
export const guardSummarySchema = z
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
  .meta({ id: 'GuardSummary' });

const guardOf = guardSummarySchema
  .nullable()
  .describe("What Claude Code's tool-result guard did in this conversation; null when nothing.");

const costUsdSchema = z
  .number()
  .nullable()
  .describe(
    "What its calls cost in US dollars, summed over the calls whose producer reported a cost (Claude Code's `cost_usd` on each `api_request` event); null when none did. rotscope never prices a call itself.",
  );

export const conversationSummarySchema = z
  .object({
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
    guard: guardOf,
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
  })
  .meta({ id: 'ConversationSummary' });

/** A conversation or a run: its LLM calls and compactions in start order (model shapes). */
const callsAndCompactions = z.object({
  id: z.string(),
  calls: z
    .array(z.custom<LlmCall>())
    .describe('LLM calls (src/model/calls.ts LlmCall), by start time.'),
  compactions: z
    .array(z.custom<Compaction>())
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

/** The answer of `GET /api/conversations/:id`. */
export const conversationSchema = callsAndCompactions
  .extend({
    guard: guardOf,
    costUsd: costUsdSchema,
    project: z
      .string()
      .nullable()
      .describe('Where it runs (working directory or repository); null when unknown.'),
    evaluation: evaluationSchema,
  })
  .meta({ id: 'Conversation' });

/** The answer of `GET /api/runs/:id`. */
export const runSchema = callsAndCompactions.meta({ id: 'Run' });

export type GuardSummary = z.infer<typeof guardSummarySchema>;
/** One conversation of `GET /api/conversations` as the store reads it (src/store/browse.ts). */
export type ConversationSummary = z.infer<typeof conversationSummarySchema>;
/** One stream of a conversation: the main thread or a sub-agent, with its side calls counted. */
export type StreamSummary = ConversationSummary['streamList'][number];
/** One run (a trace, or a Claude Code session) of a conversation. */
export type RunSummary = ConversationSummary['runs'][number];
/** A conversation's or a run's calls and compactions, in start order. */
export type CallsAndCompactions = Omit<z.infer<typeof runSchema>, 'id'>;
export type Conversation = z.infer<typeof conversationSchema>;
