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
  })
  .meta({ id: 'WhatWasLost' });

export type WhatWasLost = z.infer<typeof whatWasLostSchema>;
export type CallEnd = z.infer<typeof callEndSchema>;
