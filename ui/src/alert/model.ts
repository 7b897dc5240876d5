/**
 * The Context rot alert as the page edits it: the API's shapes (GET/PUT
 * /api/alerts/context-rot, the preview; aliases of the server's schema, ../api-types.ts), what
 * each knob means to a person (the server's own table, src/model/threshold-table.ts), and how
 * the API's validation messages are placed next to the knob they name.
 */

import type { Answer, Problem } from '../api-types.ts';
import {
  KIND_RANGE,
  THRESHOLD_KEYS,
  THRESHOLD_TABLE,
  UNIT_KIND,
  type ThresholdEntry,
  type ThresholdUnit,
} from '../../../src/model/threshold-table.ts';
import type { Severity, ThresholdKey } from '../../../src/model/vocabulary.ts';

export {
  DETECTOR_TITLES,
  SEVERITIES,
  type DetectorId,
  type Severity,
  type ThresholdKey,
} from '../../../src/model/vocabulary.ts';
export { THRESHOLD_KEYS };
export type { Problem };
/** A channel of GET /api/channels, and what POST /api/channels/:id/test answers. */
export type { Channel, TestResult } from '../channels/types.ts';

/** What GET /api/alerts/context-rot answers (and PUT, with the stored settings). */
export type AlertSettings = Answer<'/api/alerts/context-rot'>;

export type Thresholds = AlertSettings['thresholds'];

/** What POST /api/alerts/context-rot/preview answers. */
export type Preview = Answer<'/api/alerts/context-rot/preview', 'post'>;

export type PreviewCount = Preview['counts'][number];

/**
 * The form's state: numbers as typed (text), so that what the person typed is what the API
 * judges and names in its message.
 */
export interface Draft {
  enabled: boolean;
  thresholds: Record<ThresholdKey, string>;
  windowOverrides: Array<{ model: string; window: string }>;
  channels: Array<{ id: string; minSeverity: Severity }>;
}

/** How a knob is written: a share of 0..1 (shown also as %), or a whole number of calls or tokens. */
export type KnobUnit = ThresholdUnit;

/**
 * A knob as the page shows it: the server's table of the thresholds (src/model/threshold-table.ts:
 * title, detector, unit, default, the API's `doc` and the `explain` line shown beside the knob)
 * with its key and the range the API accepts.
 */
export interface Knob extends ThresholdEntry {
  key: ThresholdKey;
  range: { minimum: number; maximum?: number };
}

/** The seven knobs, grouped by the detector they tune (the table's order). */
export const KNOBS: readonly Knob[] = THRESHOLD_KEYS.map((key) => ({
  key,
  ...THRESHOLD_TABLE[key],
  range: KIND_RANGE[UNIT_KIND[THRESHOLD_TABLE[key].unit]],
}));

/** The draft of stored settings. */
export function toDraft(settings: AlertSettings): Draft {
  return {
    enabled: settings.enabled,
    thresholds: Object.fromEntries(
      THRESHOLD_KEYS.map((key) => [key, String(settings.thresholds[key])]),
    ) as Record<ThresholdKey, string>,
    windowOverrides: settings.windowOverrides.map((o) => ({
      model: o.model,
      window: String(o.window),
    })),
    channels: settings.channels.map((c) => ({ ...c })),
  };
}

/** A typed number as the API should judge it: the number, or the text when it is none. */
function typed(text: string): number | string {
  const trimmed = text.trim();
  const n = Number(trimmed);
  return trimmed !== '' && Number.isFinite(n) ? n : trimmed;
}

/** The PUT (and preview) body of a draft. */
export function toBody(draft: Draft): Record<string, unknown> {
  return {
    enabled: draft.enabled,
    thresholds: Object.fromEntries(
      THRESHOLD_KEYS.map((key) => [key, typed(draft.thresholds[key])]),
    ),
    windowOverrides: draft.windowOverrides.map((o) => ({
      model: o.model,
      window: typed(o.window),
    })),
    channels: draft.channels,
  };
}

/** Where a validation message belongs on the page. */
export interface PlacedErrors {
  knobs: Partial<Record<ThresholdKey, string[]>>;
  overrides: Record<number, string[]>;
  channels: string[];
  other: string[];
}

/**
 * Places the API's problems by the field each names: a threshold's beside that knob, a window
 * override's beside that row, the channels' in the channels section, anything else at the top.
 */
export function placeErrors(problems: readonly Problem[]): PlacedErrors {
  const placed: PlacedErrors = { knobs: {}, overrides: {}, channels: [], other: [] };
  for (const { path, message } of problems) {
    const [part, field, item] = path;
    const knob = field === 'thresholds' ? (item as ThresholdKey) : undefined;
    if (part === 'body' && knob !== undefined && THRESHOLD_KEYS.includes(knob))
      (placed.knobs[knob] ??= []).push(message);
    else if (part === 'body' && field === 'windowOverrides' && typeof item === 'number')
      (placed.overrides[item] ??= []).push(message);
    else if (part === 'body' && field === 'channels') placed.channels.push(message);
    else placed.other.push(message);
  }
  return placed;
}

/** The problems of an API error: its `problems`, else its message at the top. */
export function problemsOf(error: { message: string; body?: unknown }): Problem[] {
  const body = error.body as { problems?: unknown } | undefined;
  if (body && Array.isArray(body.problems)) return body.problems as Problem[];
  return [{ path: [], message: error.message }];
}
