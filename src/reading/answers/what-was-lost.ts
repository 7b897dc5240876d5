/**
 * The answer of `GET /api/findings/:id/what-was-lost`: one drop of a conversation (a
 * `history_lost` finding), as src/reading/what-was-lost.ts builds it. Named `WhatWasLost` in the
 * OpenAPI document.
 */
import { z } from 'zod';
import { isoTime } from '../../model/findings.ts';

const count = z.number().nullable();

export const callEndSchema = z.object({
  traceId: z.string(),
  spanId: z.string(),
  tokens: count,
  window: count,
  model: z.string().nullable(),
  startedAt: isoTime.nullable(),
});

export const whatWasLostSchema = z
  .object({
    findingId: z.string(),
    conversationId: z.string(),
    runId: z.string(),
    streamKey: z.string(),
    kind: z.enum(['compacted', 'lost']),
    severity: z.string(),
    summary: z.string(),
    tokensLost: count,
    dropRatio: count,
    before: callEndSchema,
    after: callEndSchema,
    /** The parts that lost the most, in tokens, largest first. */
    partsLost: z.array(
      z.object({ part: z.string(), name: z.string().nullable(), tokens: z.number() }),
    ),
    /** The producer of the call after (e.g. `claude_code`, `semconv`). */
    producer: z.string().nullable(),
    dropped: z.object({
      /** True when the call before's messages were stored with their content. */
      contentCaptured: z.boolean(),
      /** How many messages were dropped; null when content was not captured. */
      count: count,
      messages: z.array(
        z.object({
          role: z.string(),
          chars: z.number(),
          text: z.string().nullable(),
          tool: z.string().nullable(),
        }),
      ),
      /** Characters of the dropped messages; null when content was not captured. */
      chars: count,
    }),
    replacement: z
      .object({
        kind: z.string(),
        trigger: z.string().nullable(),
        /** How the compaction was seen: `span`, `span_event`, `flag`, ... */
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
      /** The unit of `before` and `after` (`chars` or `tokens`); null when they differ or are unknown. */
      unit: z.string().nullable(),
      change: z.string().nullable(),
      /** True when the sizes are tokens estimated from a byte count (Claude Code `system_prompt_length`). */
      estimated: z.boolean(),
      /** False for producers that never record the system prompt's text (Claude Code). */
      recorded: z.boolean(),
      textBefore: z.string().nullable(),
      textAfter: z.string().nullable(),
    }),
  })
  .meta({ id: 'WhatWasLost' });

export type WhatWasLost = z.infer<typeof whatWasLostSchema>;
export type CallEnd = z.infer<typeof callEndSchema>;
