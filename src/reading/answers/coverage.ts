/**
 * The answer of `GET /api/coverage`: what src/reading/coverage.ts reads of the workspace's calls
 * (per detector, per producer, the recent models and Claude Code versions) and the requests
 * refused for their token lately, which the route adds (`refusals`). Named `Coverage` in the
 * OpenAPI document.
 */
import { z } from 'zod';
import { isoTime } from '../../model/findings.ts';
import { DETECTOR_IDS } from '../../model/vocabulary.ts';

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

export const coverageSchema = z
  .object({
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
  })
  .meta({ id: 'Coverage' });

/** The coverage answer. */
export type Coverage = z.infer<typeof coverageSchema>;
/** What src/reading/coverage.ts reads: the answer but its refused requests. */
export type CallCoverage = Omit<Coverage, 'refusals'>;
export type DetectorCoverage = Coverage['detectors'][keyof Coverage['detectors']];
/**
 * One producer's calls (`llm_calls.producer`, e.g. `langfuse`, `openinference`) and what each
 * detector sees of them; `blind` lists the detectors none of its calls feed (Langfuse sends no
 * finish reason: `output_cut_off`).
 */
export type ProducerCoverage = Coverage['producers'][number];
/** One model of the recent calls with one window it was given (a model may have several). */
export type ModelWindowCoverage = Coverage['models'][number];
/** One Claude Code version the recent calls came from (`service.version`, a transcript's `version`). */
export type ClaudeCodeVersionCoverage = ClaudeCodeCoverage['versions'][number];
export type ClaudeCodeCoverage = Coverage['claudeCode'];
/** A model whose calls carry token counts but get no window now: context_too_full skips them. */
export type WindowUnknownCoverage = Coverage['windowsUnknown'][number];
/** The requests refused for their token lately (src/api/refusals.ts counts them). */
export type RecentRefusals = Coverage['refusals'];
