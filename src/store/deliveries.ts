/**
 * The outbox. Deliveries are written in the same transaction as the finding they announce
 * (pass the transaction as `db`), one per channel attached to the workspace's alert whose
 * minimum severity the finding reaches; a window notice's are src/store/window-notices.ts. The notifier claims due rows
 * ({@link claimDueDeliveries}), sends, and records each attempt ({@link finishAttempt});
 * the API lists them with their attempts ({@link listDeliveries}).
 *
 * A claim is a lease: it moves the row's `next_attempt_at` past the send's deadline, so a
 * process that dies mid-send leaves a row that becomes due again (at-least-once, same id).
 */
import { sql } from 'kysely';
import { SEVERITIES, SEVERITY_RANK, type Severity } from '../model/findings.ts';
import { isBigintId } from './channels.ts';
import type { Clock } from '../model/clock.ts';
import { nowOf } from './clock-sql.ts';
import type { Db } from './db.ts';
import { PREPARED } from './prepared.ts';

/** A finding's events; a window notice's deliveries have the event `window.unknown`. */
export type DeliveryEvent = 'created' | 'escalated';

/** `muted`: held back by a mute (src/store/mutes.ts) when queued; never claimed, never sent. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'dead' | 'muted';

/**
 * Queues one delivery per attached channel for a finding event. Idempotent: an event already
 * queued for a channel is not queued again. Returns the number of rows queued. With `muteId`
 * (a mute that matches the finding) the rows are written `muted` instead of `pending`: the
 * outbox shows what would have gone where, and the notifier never claims them.
 */
export async function enqueueDeliveries(
  db: Db,
  event: {
    workspaceId: string;
    findingId: string;
    severity: Severity;
    event: DeliveryEvent;
    muteId?: string | null | undefined;
  },
): Promise<number> {
  const { workspaceId, ...row } = event;
  const [queued] = await enqueueDeliveryEvents(db, workspaceId, [row]);
  return queued ?? 0;
}

/** One finding event of {@link enqueueDeliveryEvents}. */
export interface DeliveryEventRow {
  findingId: string;
  severity: Severity;
  event: DeliveryEvent;
  muteId?: string | null | undefined;
}

/**
 * {@link enqueueDeliveries} for many finding events of one workspace, in one statement whatever
 * their number: each event joined with the workspace's channels whose minimum severity it
 * reaches (an unknown minimum counts as critical), the rows inserted as they are found (an
 * evaluator's batch pays one round trip, none to read the channels first). Returns the rows
 * queued per event, in order.
 */
export async function enqueueDeliveryEvents(
  db: Db,
  workspaceId: string,
  events: readonly DeliveryEventRow[],
): Promise<number[]> {
  if (events.length === 0) return [];
  const rows = events.map((event) => ({
    finding_id: event.findingId,
    event: event.event,
    rank: SEVERITY_RANK[event.severity],
    mute_id: event.muteId ?? null,
  }));
  const { rows: inserted } = await sql<{ finding_id: string; event: string }>`
    INSERT INTO deliveries (id, workspace_id, finding_id, channel_id, event, status, mute_id)
    SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), c.workspace_id, e.finding_id,
      c.channel_id, e.event, CASE WHEN e.mute_id IS NULL THEN 'pending' ELSE 'muted' END,
      e.mute_id
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      AS e(finding_id int8, event text, rank int4, mute_id int8)
    -- a channel's minimum ranked by its place in SEVERITIES (lowest first: SEVERITY_RANK's order)
    JOIN alert_channels c ON c.workspace_id = ${workspaceId}
     AND COALESCE(array_position(${SEVERITIES}::text[], c.min_severity) - 1,
                  ${SEVERITY_RANK.critical}) <= e.rank
    ON CONFLICT (finding_id, channel_id, event) DO NOTHING
    RETURNING finding_id, event ${PREPARED}`.execute(db);
  const count = new Map<string, number>();
  for (const row of inserted) {
    const key = `${String(row.finding_id)}\u0000${row.event}`;
    count.set(key, (count.get(key) ?? 0) + 1);
  }
  return events.map((event) => {
    const key = `${event.findingId}\u0000${event.event}`;
    const n = count.get(key) ?? 0;
    count.delete(key); // an event listed twice is queued once
    return n;
  });
}

/** A delivery the notifier has claimed. */
export interface ClaimedDelivery {
  id: string;
  workspaceId: string;
  /** The finding announced; null for a window notice. */
  findingId: string | null;
  /** The window notice announced (src/store/window-notices.ts); null for a finding. */
  noticeId: string | null;
  channelId: string;
  event: string;
  /** The attempt this claim is (1 for the first); the claim's token in {@link finishAttempt}. */
  attempt: number;
  /** Age of the delivery (ms since it was queued) by the database clock at claim time. */
  ageMs: number;
}

export interface ClaimOptions {
  /** Most rows to claim. */
  limit: number;
  /** How long the claim holds (ms): longer than a send can take. */
  leaseMs: number;
  /** Channels to skip (those already busy in this process). */
  excludeChannelIds?: readonly string[];
  /** Most rows of one channel per claim. Default 2. */
  perChannel?: number;
  /** The rules' clock (due times, the lease, the age give-up is judged on). Default: the database's. */
  clock?: Clock | undefined;
}

/**
 * Claims up to `limit` due pending deliveries in one statement (`FOR UPDATE SKIP LOCKED`, so
 * concurrent notifiers never claim the same row) and leases them: `attempts` goes up by one
 * and `next_attempt_at` moves `leaseMs` ahead. Oldest due first, at most `perChannel` rows
 * of one channel, so one busy channel cannot take every slot.
 */
export async function claimDueDeliveries(
  db: Db,
  options: ClaimOptions,
): Promise<ClaimedDelivery[]> {
  const limit = Math.max(1, Math.floor(options.limit));
  const perChannel = Math.max(1, Math.floor(options.perChannel ?? 2));
  const exclude = (options.excludeChannelIds ?? []).filter(isBigintId);
  const now = nowOf(options.clock);
  const excludeSql =
    exclude.length > 0
      ? sql`AND channel_id NOT IN (${sql.join(exclude.map((id) => sql`${id}::bigint`))})`
      : sql``;
  const result = await sql<{
    id: string;
    workspace_id: string;
    finding_id: string | null;
    notice_id: string | null;
    channel_id: string;
    event: string;
    attempts: number;
    age_ms: string;
  }>`
    WITH locked AS (
      SELECT id, channel_id, next_attempt_at
      FROM deliveries
      WHERE status = 'pending' AND next_attempt_at <= ${now} ${excludeSql}
      ORDER BY next_attempt_at
      LIMIT ${limit * 4}
      FOR UPDATE SKIP LOCKED
    ), picked AS (
      SELECT id FROM (
        SELECT id, next_attempt_at,
               row_number() OVER (PARTITION BY channel_id ORDER BY next_attempt_at, id) AS rank
        FROM locked
      ) ranked
      WHERE rank <= ${perChannel}
      ORDER BY next_attempt_at
      LIMIT ${limit}
    )
    UPDATE deliveries AS d
    SET attempts = d.attempts + 1,
        next_attempt_at = ${now} + ${options.leaseMs}::double precision * interval '1 millisecond',
        updated_at = now()
    FROM picked
    WHERE d.id = picked.id
    RETURNING d.id, d.workspace_id, d.finding_id, d.notice_id, d.channel_id, d.event, d.attempts,
              floor(extract(epoch FROM (${now} - d.created_at)) * 1000)::bigint AS age_ms
  `.execute(db);
  return result.rows.map((row) => ({
    id: row.id,
    workspaceId: row.workspace_id,
    findingId: row.finding_id === null ? null : String(row.finding_id),
    noticeId: row.notice_id === null ? null : String(row.notice_id),
    channelId: String(row.channel_id),
    event: row.event,
    attempt: Number(row.attempts),
    ageMs: Number(row.age_ms),
  }));
}

/** What an attempt led to. */
export type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'dead';

export interface AttemptRecord {
  deliveryId: string;
  /** The claim's `attempt`: the row is updated only while that claim still holds. */
  attempt: number;
  outcome: AttemptOutcome;
  statusCode?: number | undefined;
  error?: string | undefined;
  durationMs: number;
  /** For `retry`: the wait before the next attempt (ms). */
  retryInMs?: number | undefined;
}

/**
 * Logs an attempt in `delivery_attempts` and moves the delivery on: `delivered`, `failed`
 * (permanent error), `dead` (gave up), or back to `pending` with `next_attempt_at` set
 * `retryInMs` ahead. The attempt is always logged; the delivery is only updated if it is
 * still pending under this claim (returns false otherwise: another notifier took over after
 * the lease ran out). Run it in a transaction.
 */
export async function finishAttempt(
  db: Db,
  record: AttemptRecord,
  clock?: Clock,
): Promise<boolean> {
  await db
    .insertInto('delivery_attempts')
    .values({
      delivery_id: record.deliveryId,
      status_code: record.statusCode ?? null,
      error: record.error ?? null,
      duration_ms: Math.max(0, Math.round(record.durationMs)),
      outcome: record.outcome,
    })
    .execute();
  const base = db
    .updateTable('deliveries')
    .where('id', '=', record.deliveryId)
    .where('attempts', '=', record.attempt)
    .where('status', '=', 'pending');
  const error = record.error ?? null;
  let query;
  switch (record.outcome) {
    case 'delivered':
      query = base.set({
        status: 'delivered',
        delivered_at: sql`now()`,
        last_error: null,
        updated_at: sql`now()`,
      });
      break;
    case 'failed':
    case 'dead':
      query = base.set({ status: record.outcome, last_error: error, updated_at: sql`now()` });
      break;
    case 'retry':
      query = base.set({
        last_error: error,
        updated_at: sql`now()`,
        next_attempt_at: sql`${nowOf(clock)} + ${record.retryInMs ?? 0}::double precision * interval '1 millisecond'`,
      });
      break;
  }
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export interface DeliveryAttemptView {
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  outcome: string;
}

/** A delivery as the API shows it, with its attempt log (oldest first). */
export interface DeliveryView {
  id: string;
  /** The finding announced; null for a window notice. */
  findingId: string | null;
  /** The window notice announced; null for a finding. */
  noticeId: string | null;
  channelId: string;
  event: string;
  status: DeliveryStatus;
  /** The mute that held it back (status `muted`); null otherwise, or once that mute is deleted. */
  muteId: string | null;
  attemptCount: number;
  /** When the next attempt is due (pending deliveries only). */
  nextAttemptAt: string | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  deliveredAt: string | null;
  attempts: DeliveryAttemptView[];
}

/**
 * Where a page of deliveries ends: the last item's `created_at` in microseconds since the
 * epoch and its id.
 */
export type DeliveryKey = readonly [createdMicros: string, id: string];

export interface DeliveryPage {
  items: DeliveryView[];
  /** Pass as `after` to get the next page; null on the last page. */
  next: DeliveryKey | null;
}

function iso(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/**
 * The workspace's deliveries, newest first, optionally of one finding and/or one channel,
 * `limit` per page (1..200, default 50), each with its attempts. `after` continues after
 * the last item of a previous page.
 */
export async function listDeliveries(
  db: Db,
  workspaceId: string,
  options: {
    findingId?: string | undefined;
    channelId?: string | undefined;
    after?: DeliveryKey | undefined;
    limit?: number | undefined;
  } = {},
): Promise<DeliveryPage> {
  const limit = Math.min(Math.max(options.limit ?? 50, 1), 200);
  if (options.findingId !== undefined && !isBigintId(options.findingId))
    return { items: [], next: null };
  if (options.channelId !== undefined && !isBigintId(options.channelId))
    return { items: [], next: null };
  let query = db
    .selectFrom('deliveries')
    .selectAll()
    .select(sql<string>`floor(extract(epoch FROM created_at) * 1000000)::bigint`.as('created_us'))
    .where('workspace_id', '=', workspaceId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1);
  if (options.findingId !== undefined) query = query.where('finding_id', '=', options.findingId);
  if (options.channelId !== undefined) query = query.where('channel_id', '=', options.channelId);
  if (options.after !== undefined) {
    const [micros, id] = options.after;
    query = query.where(
      sql<boolean>`(created_at, id) < (timestamptz 'epoch' + ${micros}::bigint * interval '1 microsecond', ${id})`,
    );
  }
  const rows = await query.execute();
  const page = rows.slice(0, limit);
  const attempts =
    page.length === 0
      ? []
      : await db
          .selectFrom('delivery_attempts')
          .selectAll()
          .where(
            'delivery_id',
            'in',
            page.map((row) => row.id),
          )
          .orderBy('at', 'asc')
          .orderBy('id', 'asc')
          .execute();
  const byDelivery = new Map<string, DeliveryAttemptView[]>();
  for (const attempt of attempts) {
    const list = byDelivery.get(attempt.delivery_id) ?? [];
    list.push({
      at: iso(attempt.at),
      statusCode: attempt.status_code,
      error: attempt.error,
      durationMs: attempt.duration_ms,
      outcome: attempt.outcome,
    });
    byDelivery.set(attempt.delivery_id, list);
  }
  const items = page.map((row): DeliveryView => ({
    id: row.id,
    findingId: row.finding_id === null ? null : String(row.finding_id),
    noticeId: row.notice_id === null ? null : String(row.notice_id),
    channelId: String(row.channel_id),
    event: row.event,
    status: row.status,
    muteId: row.mute_id === null ? null : String(row.mute_id),
    attemptCount: row.attempts,
    nextAttemptAt: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    lastError: row.last_error,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    deliveredAt: row.delivered_at ? iso(row.delivered_at) : null,
    attempts: byDelivery.get(row.id) ?? [],
  }));
  const last = page.at(-1);
  return {
    items,
    next: rows.length > limit && last ? [String(last.created_us), last.id] : null,
  };
}
