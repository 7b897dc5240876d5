/**
 * The Context rot alert as the page edits it: the API's shapes (GET/PUT
 * /api/alerts/context-rot, the preview), what each knob means to a person, and how the API's
 * validation messages are placed next to the knob they name.
 */

import type { DetectorId, Severity, ThresholdKey } from '../../../src/model/vocabulary.ts';

export {
  DETECTOR_TITLES,
  SEVERITIES,
  type DetectorId,
  type Severity,
  type ThresholdKey,
} from '../../../src/model/vocabulary.ts';

export type Thresholds = Record<ThresholdKey, number>;

/** What GET /api/alerts/context-rot answers. */
export interface AlertSettings {
  enabled: boolean;
  thresholds: Thresholds;
  windowOverrides: Array<{ model: string; window: number }>;
  channels: Array<{ id: string; minSeverity: Severity }>;
  updatedAt: string | null;
  defaults: { thresholds: Thresholds };
}

/** A channel of GET /api/channels. */
export interface Channel {
  id: string;
  type: 'webhook' | 'slack' | 'email';
  name: string;
}

/** What POST /api/channels/:id/test answers. */
export interface TestResult {
  ok: boolean;
  status: 'ok' | 'retry' | 'permanent';
  code?: number;
  error?: string;
}

export interface PreviewCount {
  detector: DetectorId;
  info: number;
  warning: number;
  critical: number;
  total: number;
}

/** What POST /api/alerts/context-rot/preview answers. */
export interface Preview {
  since: string;
  until: string;
  days: number;
  scanned: { conversations: number; calls: number };
  limits: { conversations: number; calls: number };
  truncated: boolean;
  counts: PreviewCount[];
  total: number;
  examples: Array<{
    detector: DetectorId;
    severity: Severity;
    kind: string | null;
    conversationId: string;
    runId: string;
    summary: string;
  }>;
  compared: { counts: PreviewCount[]; total: number } | null;
}

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
export type KnobUnit = 'share' | 'calls' | 'tokens';

export interface Knob {
  key: ThresholdKey;
  label: string;
  /** One line: what the knob does, in the words of the detector rules (DESIGN §6). */
  explain: string;
  unit: KnobUnit;
  detector: DetectorId;
}

/** The seven knobs, grouped by the detector they tune. */
export const KNOBS: Knob[] = [
  {
    key: 'usageThreshold',
    label: 'Usage threshold',
    explain:
      'A run is reported once a call fills this share of its model’s context window (first crossing call).',
    unit: 'share',
    detector: 'context_too_full',
  },
  {
    key: 'usageCritical',
    label: 'Critical usage',
    explain:
      'The finding turns critical once the run’s fullest call reaches this share (or a call overflowed). At least the usage threshold.',
    unit: 'share',
    detector: 'context_too_full',
  },
  {
    key: 'toolShare',
    label: 'Tool share',
    explain: 'One tool’s results taking this share of a call’s input start a takeover episode.',
    unit: 'share',
    detector: 'tool_takeover',
  },
  {
    key: 'toolPersistCalls',
    label: 'Persisting calls',
    explain:
      'The episode is reported when the tool’s results stay at least half that share for this many following calls.',
    unit: 'calls',
    detector: 'tool_takeover',
  },
  {
    key: 'dropRatio',
    label: 'Drop ratio',
    explain:
      'A call whose usage falls by this share from the previous call of the same thread counts as a drop…',
    unit: 'share',
    detector: 'history_lost',
  },
  {
    key: 'dropMinTokens',
    label: 'Minimum drop',
    explain: '…and only if it also falls by at least this many tokens.',
    unit: 'tokens',
    detector: 'history_lost',
  },
  {
    key: 'systemShrink',
    label: 'System prompt shrink',
    explain:
      'A drop where the system prompt shrank by more than this share (or vanished) is a warning even when a compaction explains it.',
    unit: 'share',
    detector: 'history_lost',
  },
];

export const THRESHOLD_KEYS: ThresholdKey[] = KNOBS.map((k) => k.key);

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

/** One problem of an API 400: the field it is about (`['body', 'thresholds', 'toolShare']`). */
export interface Problem {
  path: Array<string | number>;
  message: string;
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
