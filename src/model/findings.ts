/** Findings: what the detectors report (DESIGN §6, §8). */
import { z } from 'zod';

import { DETECTOR_IDS, SEVERITIES, type DetectorId, type Severity } from './vocabulary.ts';

export {
  DETECTOR_IDS,
  DETECTOR_TITLES,
  detectorTitle,
  SEVERITIES,
  SEVERITY_RANK,
  type DetectorId,
  type Severity,
} from './vocabulary.ts';

export {
  COUNT_THRESHOLDS,
  DEFAULT_THRESHOLDS,
  RATIO_THRESHOLDS,
  type Thresholds,
} from './thresholds.ts';

/**
 * A finding as a detector produces it. `(detector, anchor)` is unique per workspace:
 * producing the same anchor again updates the stored finding (details, escalation),
 * never duplicates it, and never lowers its severity.
 */
export interface FindingDraft {
  detector: DetectorId;
  anchor: string;
  severity: Severity;
  kind: string | null;
  conversationId: string;
  streamKey: string;
  runId: string;
  traceId: string;
  spanId: string;
  model: string | null;
  /** One human-readable line, counts and names only (never message text). */
  summary: string;
  details: Record<string, unknown>;
}

/**
 * A time as JSON: an ISO 8601 string. Documented as `date-time`, not checked on the way out (a
 * time the server wrote is one).
 */
export const isoTime = z.string().meta({ format: 'date-time' });

/**
 * A stored finding, as the API returns it and channels announce it (DESIGN §8): the one
 * schema of the Finding JSON. `kind` and `model` are null when the detector has none.
 */
export const findingSchema = z
  .object({
    id: z.string(),
    detector: z.enum(DETECTOR_IDS),
    severity: z.enum(SEVERITIES),
    kind: z.string().nullable(),
    workspace: z.string(),
    conversationId: z.string(),
    streamKey: z.string(),
    runId: z.string(),
    anchor: z.string().describe('Unique per detector within the workspace.'),
    traceId: z.string(),
    spanId: z.string(),
    model: z.string().nullable(),
    createdAt: isoTime,
    updatedAt: isoTime,
    summary: z.string().describe('One human-readable line, counts and names only.'),
    details: z.record(z.string(), z.unknown()).describe('The numbers the detector reports.'),
    late: z
      .boolean()
      .describe(
        'True when the finding was made by judging calls again that had been judged already: a window ' +
          'that arrived after them (the agent reported it, or a window override was saved) or a call ' +
          'that arrived between them. Set when created, never changed.',
      ),
    project: z
      .string()
      .nullable()
      .describe(
        "Where its conversation runs: the working directory or repository the producer last reported, exactly as stored (what `?project=` and a mute's `project` match); null when none did.",
      ),
    acknowledgedAt: isoTime
      .nullable()
      .describe('When someone acknowledged it (POST /api/findings/{id}/acknowledge); null until.'),
    acknowledgedNote: z
      .string()
      .nullable()
      .describe('The note written when it was acknowledged; null until.'),
  })
  .meta({ id: 'Finding' });

/** A stored finding, as the API returns it (DESIGN §8). */
export type Finding = z.infer<typeof findingSchema>;
