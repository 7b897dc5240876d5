/**
 * What every channel announces: the finding JSON of DESIGN §8, a link to it in the console
 * and the workspace. Webhooks send it as is (a Standard Webhooks envelope); Slack and email
 * format it for people.
 *
 * ```json
 * { "type": "finding.created", "timestamp": "2026-01-01T00:00:00.000Z",
 *   "data": { "id": "42", "detector": "context_too_full", "severity": "warning", ...,
 *             "url": "http://127.0.0.1:4318/#/findings/42", "workspaceName": "default" } }
 * ```
 */
import type { Config } from '../config.ts';
import type { Finding } from '../model/findings.ts';
import type { Db } from '../store/db.ts';

/** `finding.created` and `finding.escalated` for outbox events; `test` for test messages. */
export type PayloadType = 'finding.created' | 'finding.escalated' | 'test';

/** The finding as DESIGN §8 shows it (`kind`, `model` omitted when absent). */
export interface FindingJson {
  id: string;
  detector: string;
  severity: Finding['severity'];
  kind?: string;
  workspace: string;
  conversationId: string;
  traceId: string;
  spanId: string;
  model?: string;
  createdAt: string;
  updatedAt: string;
  summary: string;
  details: Record<string, unknown>;
}

export interface FindingPayload {
  type: PayloadType;
  /** When the event happened (ISO 8601): the finding's creation, or its last update. */
  timestamp: string;
  data: FindingJson & {
    /** The finding in the console. */
    url: string;
    workspaceName: string;
  };
}

/** The console's base URL: `publicUrl`, else `http://HOST:PORT`, without a trailing slash. */
export function consoleBaseUrl(config: Pick<Config, 'publicUrl' | 'host' | 'port'>): string {
  const base =
    config.publicUrl ??
    `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  return base.replace(/\/+$/, '');
}

/** The console link of a finding. */
export function findingUrl(
  config: Pick<Config, 'publicUrl' | 'host' | 'port'>,
  findingId: string,
): string {
  return `${consoleBaseUrl(config)}/#/findings/${encodeURIComponent(findingId)}`;
}

function iso(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/** Builds the payload for a finding. */
export function buildPayload(
  finding: FindingJson,
  type: PayloadType,
  workspaceName: string,
  config: Pick<Config, 'publicUrl' | 'host' | 'port'>,
): FindingPayload {
  return {
    type,
    timestamp: type === 'finding.escalated' ? finding.updatedAt : finding.createdAt,
    data: { ...finding, url: findingUrl(config, finding.id), workspaceName },
  };
}

/**
 * Loads a finding of a workspace as §8 JSON, with the workspace's name (the workspace id:
 * workspaces have no separate display name yet). Undefined when it does not exist.
 */
export async function loadFinding(
  db: Db,
  workspaceId: string,
  findingId: string,
): Promise<{ finding: FindingJson; workspaceName: string } | undefined> {
  const row = await db
    .selectFrom('findings')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', findingId)
    .executeTakeFirst();
  if (!row) return undefined;
  const finding: FindingJson = {
    id: String(row.id),
    detector: row.detector,
    severity: row.severity,
    ...(row.kind !== null ? { kind: row.kind } : {}),
    workspace: row.workspace_id,
    conversationId: row.conversation_id,
    traceId: row.trace_id,
    spanId: row.span_id,
    ...(row.model !== null ? { model: row.model } : {}),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    summary: row.summary,
    details: (row.details ?? {}) as Record<string, unknown>,
  };
  return { finding, workspaceName: row.workspace_id };
}

/** A made-up finding for `POST /api/channels/:id/test`: plausible numbers, clearly a test. */
export function testPayload(
  workspaceId: string,
  config: Pick<Config, 'publicUrl' | 'host' | 'port'>,
  now: Date,
): FindingPayload {
  const at = now.toISOString();
  const finding: FindingJson = {
    id: 'test',
    detector: 'context_too_full',
    severity: 'warning',
    workspace: workspaceId,
    conversationId: 'test-conversation',
    traceId: '00000000000000000000000000000000',
    spanId: '0000000000000000',
    model: 'claude-sonnet-4-5',
    createdAt: at,
    updatedAt: at,
    summary: 'Test message from rotscope: this channel works',
    details: { usage: 150_000, window: 200_000, percentage: 75, windowSource: 'catalog' },
  };
  return buildPayload(finding, 'test', workspaceId, config);
}

/** Detector ids as people read them. */
export const DETECTOR_TITLES: Record<string, string> = {
  context_too_full: 'Context too full',
  tool_takeover: 'Tool takeover',
  history_lost: 'History lost',
  output_cut_off: 'Output cut off',
};

/** A detector's title, or its id when unknown. */
export function detectorTitle(detector: string): string {
  return DETECTOR_TITLES[detector] ?? detector;
}

/**
 * The headline numbers of a finding for human-readable channels: the scalar entries of
 * `details` (numbers, strings, booleans), at most `limit`, keys as written by the detector
 * turned into words ("tokensLost" → "Tokens lost"). Ratios (0..1 under a key ending in
 * "share"/"ratio") are shown as percentages.
 */
export function headlineNumbers(
  details: Record<string, unknown>,
  limit = 8,
): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(details)) {
    if (rows.length >= limit) break;
    let text: string;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) continue;
      text =
        /(share|ratio)$/i.test(key) && value >= 0 && value <= 1
          ? `${(value * 100).toFixed(1)}%`
          : Number.isInteger(value)
            ? value.toLocaleString('en-US')
            : value.toLocaleString('en-US', { maximumFractionDigits: 2 });
    } else if (typeof value === 'string') {
      if (value === '') continue;
      text = value.length > 120 ? `${value.slice(0, 120)}…` : value;
    } else if (typeof value === 'boolean') {
      text = value ? 'yes' : 'no';
    } else continue;
    rows.push([humanize(key), text]);
  }
  return rows;
}

function humanize(key: string): string {
  const words = key
    .replace(/_/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
