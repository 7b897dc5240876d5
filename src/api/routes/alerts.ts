/**
 * GET/PUT /api/alerts/context-rot: the workspace's Context rot alert (DESIGN §8) — enabled,
 * thresholds, window overrides and attached channels. PUT merges what it is given over the
 * current settings (every field optional, thresholds one by one), validates the result as a
 * whole and answers 400 listing every problem; nothing is changed then.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Severity } from '../../model/findings.ts';
import { THRESHOLD_KEYS, checkThresholds, type Thresholds } from '../../model/thresholds.ts';
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
  type WindowOverride,
} from '../../store/alerts.ts';
import type { Db } from '../../store/db.ts';
import type { ApiDeps } from '../types.ts';

/** The body of PUT /api/alerts/context-rot. */
export interface AlertSettingsInput {
  enabled?: boolean;
  thresholds?: Partial<Record<keyof Thresholds, number>>;
  windowOverrides?: WindowOverride[];
  /** Channel ids as strings (numbers are coerced by the schema). */
  channels?: { id: string; minSeverity: Severity }[];
}

const TOP_LEVEL_KEYS = ['enabled', 'thresholds', 'windowOverrides', 'channels'];
/** Fields GET returns that a PUT may send back and that are ignored. */
const READ_ONLY_KEYS = ['updatedAt'];
/** Largest window override accepted (tokens). */
const MAX_WINDOW = 100_000_000;

export type MergeResult =
  { ok: true; settings: Omit<AlertSettings, 'updatedAt'> } | { ok: false; errors: string[] };

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
  const errors: string[] = [];
  for (const key of Object.keys(input)) {
    if (!TOP_LEVEL_KEYS.includes(key) && !READ_ONLY_KEYS.includes(key))
      errors.push(`unknown field ${key}`);
  }
  const given = input.thresholds ?? {};
  for (const key of Object.keys(given)) {
    if (!THRESHOLD_KEYS.includes(key as keyof Thresholds))
      errors.push(`unknown field thresholds.${key}`);
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
  if (!checked.ok) errors.push(...checked.errors);
  const windowOverrides = input.windowOverrides ?? current.windowOverrides;
  windowOverrides.forEach((override, i) => {
    if (override.model.trim() === '')
      errors.push(`windowOverrides[${i}].model must be a non-empty model glob`);
    if (!(
      Number.isSafeInteger(override.window) &&
      override.window > 0 &&
      override.window <= MAX_WINDOW
    )) {
      errors.push(
        `windowOverrides[${i}].window must be a positive integer of at most ${MAX_WINDOW} tokens (got ${override.window})`,
      );
    }
  });
  if (errors.length > 0) return { ok: false, errors };
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

const thresholdsSchema = {
  type: 'object',
  properties: Object.fromEntries(THRESHOLD_KEYS.map((key) => [key, { type: 'number' }])),
} as const;

const settingsSchema = {
  type: 'object',
  required: ['enabled', 'thresholds', 'windowOverrides', 'channels'],
  properties: {
    enabled: { type: 'boolean' },
    thresholds: {
      type: 'object',
      required: THRESHOLD_KEYS,
      properties: thresholdsSchema.properties,
    },
    windowOverrides: {
      type: 'array',
      items: {
        type: 'object',
        required: ['model', 'window'],
        properties: { model: { type: 'string' }, window: { type: 'integer' } },
      },
    },
    channels: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'minSeverity'],
        properties: { id: { type: 'string' }, minSeverity: { type: 'string' } },
      },
    },
    updatedAt: { type: ['string', 'null'] },
  },
} as const;

const errorSchema = {
  type: 'object',
  properties: {
    error: { type: 'string' },
    message: { type: 'string' },
    errors: { type: 'array', items: { type: 'string' } },
  },
} as const;

/**
 * What GET returns is a valid PUT. Unknown top-level and threshold fields are reported by
 * mergeAlertSettings, all at once (so no `additionalProperties: false` at those levels).
 */
const putBodySchema = {
  type: 'object',
  properties: {
    enabled: { type: 'boolean' },
    thresholds: thresholdsSchema,
    windowOverrides: {
      type: 'array',
      maxItems: 100,
      items: {
        type: 'object',
        required: ['model', 'window'],
        properties: { model: { type: 'string', maxLength: 200 }, window: { type: 'number' } },
        additionalProperties: false,
      },
    },
    channels: {
      type: 'array',
      maxItems: 100,
      items: {
        type: 'object',
        required: ['id', 'minSeverity'],
        additionalProperties: false,
        properties: {
          id: { type: 'string', minLength: 1, maxLength: 32 },
          minSeverity: { type: 'string', enum: ['info', 'warning', 'critical'] },
        },
      },
    },
    updatedAt: { type: ['string', 'null'], description: 'Read-only: ignored.' },
  },
} as const;

async function readSettings(db: Db, workspaceId: string) {
  const [settings, channels] = await Promise.all([
    getAlertSettings(db, workspaceId),
    getAlertChannels(db, workspaceId),
  ]);
  return { ...settings, channels };
}

/** Thrown inside the PUT transaction to roll it back with a 400. */
class InvalidSettings extends Error {
  constructor(readonly errors: string[]) {
    super(errors.join('; '));
  }
}

/** The alert settings routes: GET needs `read`, PUT `admin`. */
export const alertsRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  const db = deps.store.db;

  app.get(
    '/api/alerts/context-rot',
    { config: { scope: 'read' }, schema: { response: { 200: settingsSchema } } },
    async (request) => readSettings(db, request.workspaceId),
  );

  app.put<{ Body: AlertSettingsInput }>(
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
          const merged = mergeAlertSettings(current, request.body ?? {});
          if (!merged.ok) throw new InvalidSettings(merged.errors);
          await putAlertSettings(trx, workspaceId, merged.settings);
          if (request.body?.channels) {
            const channels: AlertChannel[] = request.body.channels.map((c) => ({
              id: c.id,
              minSeverity: c.minSeverity,
            }));
            const set = await setAlertChannels(trx, workspaceId, channels);
            if (!set.ok) throw new InvalidSettings([`channels: ${set.error}`]);
          }
        });
      } catch (error) {
        if (!(error instanceof InvalidSettings)) throw error;
        return reply
          .code(400)
          .send({ error: 'bad_request', message: error.message, errors: error.errors });
      }
      return readSettings(db, workspaceId);
    },
  );
};
