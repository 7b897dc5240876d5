/**
 * GET/PUT /api/alerts/context-rot: the workspace's Context rot alert (DESIGN §8) — enabled,
 * thresholds, window overrides and attached channels. PUT merges what it is given over the
 * current settings (every field optional, thresholds one by one), validates the result as a
 * whole and answers 400 listing every problem; nothing is changed then.
 */
import { z } from 'zod';
import { DETECTOR_IDS, SEVERITIES } from '../../model/findings.ts';
import {
  DEFAULT_THRESHOLDS,
  THRESHOLD_KEYS,
  checkThresholds,
  thresholdValuesSchema,
  type Thresholds,
} from '../../model/thresholds.ts';
import {
  getAlertChannels,
  setAlertChannels,
  type AlertChannel,
} from '../../store/alert-channels.ts';
import {
  getAlertSettings,
  lockAlertSettings,
  putAlertSettings,
  type AlertSettings,
} from '../../store/alerts.ts';
import { markModelCallsDirty, storedCallModels } from '../../store/conversations.ts';
import type { Db } from '../../store/db.ts';
import { closeWindowNotices, openWindowNoticeModels } from '../../store/window-notices.ts';
import { overrideWindow } from '../../ingest/windows.ts';
import type { WindowOverride } from '../../model/window-overrides.ts';
import { PREVIEW_DAYS, PREVIEW_LIMITS, previewContextRot } from '../../evaluator/preview.ts';
import { isOverrideWindow, MAX_OVERRIDE_WINDOW } from '../../model/window-overrides.ts';
import { usageBands } from '../../model/usage-bands.ts';
import { isoTime, problemSchema, type Problem } from '../schemas.ts';
import type { ApiDeps } from '../types.ts';
import { withInputRules } from '../validation.ts';
import { refuse } from '../errors.ts';

/** The Context rot alert as GET returns it (and PUT answers). */
const agentKnobsSchema = z
  .object({
    usageThreshold: z.number().describe('context_too_full fires from this share of the window.'),
    usageCritical: z.number().describe('context_too_full is critical from this share.'),
    toolShare: z
      .number()
      .describe("One tool's share of a call's input where tool_takeover starts."),
    bands: z
      .object({ dimBelow: z.number(), amberFrom: z.number(), redFrom: z.number() })
      .describe('The colour bands of a usage share: dim below dimBelow, amber, red.'),
  })
  .meta({ id: 'AgentKnobs' });

const settingsSchema = z
  .object({
    enabled: z.boolean(),
    thresholds: thresholdValuesSchema,
    windowOverrides: z.array(
      z.object({
        model: z.string().describe('A model-id glob, e.g. `claude-*`'),
        window: z.number().describe('Tokens'),
      }),
    ),
    channels: z.array(z.object({ id: z.string(), minSeverity: z.enum(SEVERITIES) })),
    updatedAt: isoTime.nullable().describe('Null until first changed.'),
    defaults: z
      .object({ thresholds: thresholdValuesSchema })
      .describe('Read-only: the value of each knob in a workspace that never changed it.'),
  })
  .meta({ id: 'AlertSettings' });

const errorSchema = z
  .object({
    error: z.string(),
    message: z.string(),
    errors: z.array(z.string()).optional().describe('Every problem, when there are several.'),
    problems: z
      .array(problemSchema)
      .optional()
      .describe(
        'The same problems, each with the field it is about (`["body", "thresholds", "toolShare"]`).',
      ),
  })
  .meta({ id: 'AlertSettingsError' });

/**
 * The body of PUT /api/alerts/context-rot: what GET returned, or any part of it. Unknown
 * top-level and threshold fields are let through to mergeAlertSettings, which reports them
 * with every other problem at once (`unknown field colour`); threshold bounds are its too.
 */
const putBodySchema = z.looseObject({
  enabled: z.boolean().optional(),
  thresholds: thresholdValuesSchema.partial().loose().optional(),
  windowOverrides: z
    .array(z.strictObject({ model: z.string().max(200), window: z.number() }))
    .max(100)
    .optional(),
  channels: z
    .array(
      z.strictObject({
        id: z
          .union([z.string().min(1).max(32), z.int().nonnegative()])
          .transform(String)
          .describe('A channel id (a number is read as its decimal text).'),
        minSeverity: z.enum(SEVERITIES),
      }),
    )
    .max(100)
    .optional(),
  updatedAt: z.string().nullable().optional().describe('Read-only: ignored.'),
  defaults: z.unknown().optional().describe('Read-only: ignored.'),
});

/** The body of PUT /api/alerts/context-rot. */
export type AlertSettingsInput = z.infer<typeof putBodySchema>;

/** The fields a PUT may send, the read-only `updatedAt` and `defaults` GET returns included (ignored). */
const KNOWN_KEYS = Object.keys(putBodySchema.shape);

export type MergeResult =
  | { ok: true; settings: Omit<AlertSettings, 'updatedAt'> }
  | { ok: false; errors: string[]; problems: Problem[] };

/**
 * Merges a PUT body over the current settings and validates the result: thresholds by the
 * bounds of src/model/thresholds.ts (ratios within 0–1, usageCritical ≥ usageThreshold, counts
 * positive integers), window overrides with a non-empty
 * model glob and a positive integer window, no unknown fields (read-only ones, such as the
 * `updatedAt` GET returns, are ignored). Returns every problem at once.
 */
export function mergeAlertSettings(
  current: Omit<AlertSettings, 'updatedAt'>,
  input: AlertSettingsInput,
): MergeResult {
  const problems: Problem[] = [];
  const problem = (path: Array<string | number>, message: string) =>
    problems.push({ path: ['body', ...path], message });
  for (const key of Object.keys(input)) {
    if (!KNOWN_KEYS.includes(key)) problem([key], `unknown field ${key}`);
  }
  const given = input.thresholds ?? {};
  for (const key of Object.keys(given)) {
    if (!THRESHOLD_KEYS.includes(key as keyof Thresholds))
      problem(['thresholds', key], `unknown field thresholds.${key}`);
  }
  const thresholds: Thresholds = { ...current.thresholds };
  for (const key of THRESHOLD_KEYS) {
    const value = given[key];
    if (value !== undefined) thresholds[key] = value;
  }
  const checked = checkThresholds(thresholds, {
    name: (key) => `thresholds.${key}`,
    shown: (key) => String(thresholds[key]),
  });
  if (!checked.ok)
    checked.errors.forEach((message, i) => problem(['thresholds', checked.keys[i]!], message));
  const windowOverrides = input.windowOverrides ?? current.windowOverrides;
  windowOverrides.forEach((override, i) => {
    if (override.model.trim() === '')
      problem(
        ['windowOverrides', i, 'model'],
        `windowOverrides[${i}].model must be a non-empty model glob`,
      );
    if (!isOverrideWindow(override.window)) {
      problem(
        ['windowOverrides', i, 'window'],
        `windowOverrides[${i}].window must be a positive integer of at most ${MAX_OVERRIDE_WINDOW} tokens (got ${override.window})`,
      );
    }
  });
  if (problems.length > 0) return { ok: false, errors: problems.map((p) => p.message), problems };
  return {
    ok: true,
    settings: {
      enabled: input.enabled ?? current.enabled,
      thresholds,
      windowOverrides: windowOverrides.map(({ model, window }) => ({
        model: model.trim(),
        window,
      })),
    },
  };
}

async function readSettings(db: Db, workspaceId: string) {
  const [settings, channels] = await Promise.all([
    getAlertSettings(db, workspaceId),
    getAlertChannels(db, workspaceId),
  ]);
  return { ...settings, channels, defaults: { thresholds: { ...DEFAULT_THRESHOLDS } } };
}

const countSchema = z.object({
  detector: z.enum(DETECTOR_IDS),
  info: z.int(),
  warning: z.int(),
  critical: z.int(),
  total: z.int(),
});

/** What POST /api/alerts/context-rot/preview answers. */
const previewSchema = z
  .object({
    since: isoTime.describe('Calls starting at or after this time were replayed.'),
    until: isoTime,
    days: z.int(),
    scanned: z.object({ conversations: z.int(), calls: z.int() }),
    limits: z
      .object({ conversations: z.int(), calls: z.int() })
      .describe('At most this many conversations (most recently active first) and calls are read.'),
    truncated: z
      .boolean()
      .describe('True when the limits stopped the replay before the window ended.'),
    counts: z.array(countSchema).describe('Findings the knobs would have raised, per detector.'),
    total: z.int(),
    examples: z.array(
      z.object({
        detector: z.enum(DETECTOR_IDS),
        severity: z.enum(SEVERITIES),
        kind: z.string().nullable(),
        conversationId: z.string(),
        runId: z.string(),
        traceId: z.string(),
        spanId: z.string(),
        summary: z.string(),
      }),
    ),
    compared: z
      .object({ counts: z.array(countSchema), total: z.int() })
      .nullable()
      .describe('The same calls under the stored knobs.'),
  })
  .meta({ id: 'AlertPreview' });

/** Thrown inside the PUT transaction to roll it back with a 400. */
class InvalidSettings extends Error {
  constructor(readonly problems: Problem[]) {
    super(problems.map((p) => p.message).join('; '));
  }
}

/**
 * Closes the `window.unknown` notices of the models an override now gives a window: the window is
 * known, and the model going unknown again (the override removed) is announced again.
 */
async function closeNoticesOfOverridden(
  db: Db,
  workspaceId: string,
  overrides: readonly WindowOverride[],
): Promise<void> {
  if (overrides.length === 0) return;
  const open = await openWindowNoticeModels(db, workspaceId);
  await closeWindowNotices(
    db,
    workspaceId,
    open.filter((model) => overrideWindow(model, overrides) !== null),
  );
}

/**
 * Has the evaluator judge again the stored calls whose window changes with the overrides (a new,
 * changed, reordered or removed glob gives their model another override window): each
 * conversation with such calls is marked from its earliest, so the findings they should have
 * raised are created then (`late`) and sent like any other. The models come from one query, the
 * globs are matched here with ingest's matcher, and the marks are one statement.
 */
async function rejudgeChangedWindows(
  db: Db,
  workspaceId: string,
  before: readonly WindowOverride[],
  after: readonly WindowOverride[],
): Promise<void> {
  if (JSON.stringify(before) === JSON.stringify(after)) return;
  const models = await storedCallModels(db, workspaceId);
  await markModelCallsDirty(
    db,
    workspaceId,
    models.filter((model) => overrideWindow(model, before) !== overrideWindow(model, after)),
  );
}

/**
 * The alert settings routes: GET needs `read`, PUT `admin`. The preview needs `read`: it
 * changes nothing, shows nothing a read token cannot already list (findings, runs), and its
 * work is bounded (PREVIEW_LIMITS).
 */
export const alertsRoutes = withInputRules<ApiDeps>(async (app, deps) => {
  const db = deps.store.db;

  app.get(
    '/api/alerts/context-rot',
    { config: { scope: 'read' }, schema: { response: { 200: settingsSchema } } },
    async (request) => readSettings(db, request.workspaceId),
  );

  // What an agent's own helpers (the Claude Code status line and tool-result guard) need of the
  // knobs: read with the ingest token they already hold, so their colours and budget are the
  // detectors' numbers (written to ~/.rotscope/knobs.json by the SessionStart hook).
  app.get(
    '/api/agent-knobs',
    {
      config: { scope: 'ingest' },
      schema: {
        description:
          "The knobs an agent's helpers use: the usage bands (the status line's colours) and toolShare (the tool-result guard's budget). Ingest scope.",
        response: { 200: agentKnobsSchema },
      },
    },
    async (request) => {
      const { thresholds } = await getAlertSettings(db, request.workspaceId);
      return {
        usageThreshold: thresholds.usageThreshold,
        usageCritical: thresholds.usageCritical,
        toolShare: thresholds.toolShare,
        bands: usageBands(thresholds),
      };
    },
  );

  app.put(
    '/api/alerts/context-rot',
    {
      config: { scope: 'admin' },
      schema: { body: putBodySchema, response: { 200: settingsSchema, 400: errorSchema } },
    },
    async (request, reply) => {
      const workspaceId = request.workspaceId;
      try {
        await db.transaction().execute(async (trx) => {
          const current = await lockAlertSettings(trx, workspaceId);
          const merged = mergeAlertSettings(current, request.body);
          if (!merged.ok) throw new InvalidSettings(merged.problems);
          await putAlertSettings(trx, workspaceId, merged.settings);
          // before the notices: an evaluator may hold these conversations and open a notice
          await rejudgeChangedWindows(
            trx,
            workspaceId,
            current.windowOverrides,
            merged.settings.windowOverrides,
          );
          await closeNoticesOfOverridden(trx, workspaceId, merged.settings.windowOverrides);
          if (request.body.channels) {
            const channels: AlertChannel[] = request.body.channels.map((c) => ({
              id: c.id,
              minSeverity: c.minSeverity,
            }));
            const set = await setAlertChannels(trx, workspaceId, channels);
            if (!set.ok)
              throw new InvalidSettings([
                { path: ['body', 'channels'], message: `channels: ${set.error}` },
              ]);
          }
        });
      } catch (error) {
        if (!(error instanceof InvalidSettings)) throw error;
        return refuse(reply, 'bad_request', error.message, {
          extra: { errors: error.problems.map((p) => p.message) },
          problems: error.problems,
        });
      }
      return readSettings(db, workspaceId);
    },
  );

  app.post(
    '/api/alerts/context-rot/preview',
    {
      config: { scope: 'read' },
      schema: {
        description:
          `Replays the stored calls of the last ${PREVIEW_DAYS} days through the detectors with the ` +
          'given knobs (the body PUT takes, merged over the stored settings the same way) and ' +
          `counts what they would have found; at most ${PREVIEW_LIMITS.conversations} ` +
          `conversations and ${PREVIEW_LIMITS.calls} calls. Saves nothing; the same 400 as PUT.`,
        body: putBodySchema,
        response: { 200: previewSchema, 400: errorSchema },
      },
    },
    async (request, reply) => {
      const current = await getAlertSettings(db, request.workspaceId);
      const merged = mergeAlertSettings(current, request.body);
      if (!merged.ok) {
        return refuse(reply, 'bad_request', merged.errors.join('; '), {
          extra: { errors: merged.errors },
          problems: merged.problems,
        });
      }
      return previewContextRot(db, request.workspaceId, merged.settings, {
        now: new Date(),
        compareWith: current,
      });
    },
  );
});
