/**
 * What every channel announces: the finding JSON of DESIGN §8, a link to it in the console
 * and the workspace; or a window notice (`window.unknown`: a model whose calls no source gives a
 * window, once per model, src/store/window-notices.ts). Webhooks send it as is (a Standard
 * Webhooks envelope); Slack and email format it for people.
 *
 * ```json
 * { "type": "finding.created", "timestamp": "2026-01-01T00:00:00.000Z",
 *   "data": { "id": "42", "detector": "context_too_full", "severity": "warning",
 *             "project": "/srv/app/alpha-svc", ...,
 *             "url": "http://127.0.0.1:4318/#/findings/42", "workspaceName": "default" } }
 * { "type": "window.unknown", "timestamp": "2026-01-01T00:00:00.000Z",
 *   "data": { "id": "7", "workspace": "default", "model": "claude-x", "calls": 12,
 *             "conversations": 1, "conversationId": "...", "createdAt": "...", "summary": "...",
 *             "url": "http://127.0.0.1:4318/#/coverage", "workspaceName": "default" } }
 * ```
 */
import type { Config } from '../config.ts';
import { ADVICE_MARK, summaryWithAdvice } from '../detectors/advice.ts';
import type { Finding } from '../model/findings.ts';
import { windowOverrideSetting, windowUnknownText } from '../model/window-unknown.ts';
import type { Db } from '../store/db.ts';
import { getFinding } from '../store/findings.ts';
import { getWindowNotice, type WindowNotice } from '../store/window-notices.ts';

/** `finding.created` and `finding.escalated` for outbox events; `test` for test messages. */
export type PayloadType = 'finding.created' | 'finding.escalated' | 'test';

export interface FindingPayload {
  type: PayloadType;
  /** When the event happened (ISO 8601): the finding's creation, or its last update. */
  timestamp: string;
  data: Finding & {
    /** The finding in the console. */
    url: string;
    workspaceName: string;
  };
}

/**
 * `window.unknown`: the calls of a model no source gives a window are not judged for context
 * too full; sent once per model and workspace until a window override gives it one.
 */
export interface WindowUnknownPayload {
  type: 'window.unknown';
  /** When the notice was raised (ISO 8601). */
  timestamp: string;
  data: WindowNotice & {
    /** What happened and the setting that fixes it (`What to do: ...`). */
    summary: string;
    /** The console's Coverage page, which lists the models without a window. */
    url: string;
    workspaceName: string;
  };
}

/** What a channel sends: a finding event (or a test message), or a window notice. */
export type ChannelPayload = FindingPayload | WindowUnknownPayload;

/**
 * What people-facing channels say of a late finding (`late`: made when calls already judged were
 * judged again, after a window or a call that arrived later).
 */
export const LATE_NOTE = 'late: judged again after a window or a call arrived later';

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

/** Builds the payload for a finding. */
export function buildPayload(
  finding: Finding,
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

/** The payload of a window notice. */
export function buildWindowUnknownPayload(
  notice: WindowNotice,
  workspaceName: string,
  config: Pick<Config, 'publicUrl' | 'host' | 'port'>,
): WindowUnknownPayload {
  const happened = windowUnknownText(notice.model, notice.calls);
  const advice = windowOverrideSetting(notice.model);
  return {
    type: 'window.unknown',
    timestamp: notice.createdAt,
    data: {
      ...notice,
      summary: summaryWithAdvice(capitalize(happened), capitalize(advice)),
      url: `${consoleBaseUrl(config)}/#/coverage`,
      workspaceName,
    },
  };
}

/** A window notice of a workspace, with the workspace's name; undefined when it does not exist. */
export async function loadWindowNotice(
  db: Db,
  workspaceId: string,
  noticeId: string,
): Promise<{ notice: WindowNotice; workspaceName: string } | undefined> {
  const notice = await getWindowNotice(db, workspaceId, noticeId);
  return notice && { notice, workspaceName: notice.workspace };
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * Loads a finding of a workspace as §8 JSON (the store's query and row mapper, the same the
 * API answers with), with the workspace's name (the workspace id: workspaces have no separate
 * display name yet). Undefined when it does not exist.
 */
export async function loadFinding(
  db: Db,
  workspaceId: string,
  findingId: string,
): Promise<{ finding: Finding; workspaceName: string } | undefined> {
  const finding = await getFinding(db, workspaceId, findingId);
  return finding && { finding, workspaceName: finding.workspace };
}

/** A made-up finding for `POST /api/channels/:id/test`: plausible numbers, clearly a test. */
export function testPayload(
  workspaceId: string,
  config: Pick<Config, 'publicUrl' | 'host' | 'port'>,
  now: Date,
): FindingPayload {
  const at = now.toISOString();
  const finding: Finding = {
    id: 'test',
    detector: 'context_too_full',
    severity: 'warning',
    kind: null,
    workspace: workspaceId,
    conversationId: 'test-conversation',
    streamKey: 'test-conversation',
    runId: 'test-run',
    anchor: 'test',
    traceId: '00000000000000000000000000000000',
    spanId: '0000000000000000',
    model: 'claude-sonnet-4-5',
    createdAt: at,
    updatedAt: at,
    late: false,
    project: 'test-project',
    acknowledgedAt: null,
    acknowledgedNote: null,
    summary: 'Test message from rotscope: this channel works',
    details: { usage: 150_000, window: 200_000, percentage: 75, windowSource: 'catalog' },
  };
  return buildPayload(finding, 'test', workspaceId, config);
}

/**
 * A finding's summary split into what happened and its line of advice (the text after
 * `What to do:`, without the mark), so people-facing channels can put the advice on a line of
 * its own. `advice` is null for a summary without one (test messages).
 */
export function splitSummary(summary: string): { happened: string; advice: string | null } {
  const at = summary.indexOf(ADVICE_MARK);
  if (at < 0) return { happened: summary, advice: null };
  return { happened: summary.slice(0, at), advice: summary.slice(at + ADVICE_MARK.length) };
}

export { DETECTOR_TITLES, detectorTitle } from '../model/vocabulary.ts';

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
