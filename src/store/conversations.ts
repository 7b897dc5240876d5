/**
 * Evaluation state per conversation: ingest marks a conversation dirty, the evaluator claims
 * settled ones with `FOR UPDATE SKIP LOCKED` (so any number of processes share one database
 * without evaluating a conversation twice at once), advances the position and stores the
 * detectors' state. Checkpoints of that state let a late call replay from nearby.
 * Every function takes the database handle first; the caller owns the transaction.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Clock } from '../model/clock.ts';
import { nowOf } from './clock-sql.ts';
import type { Db } from './db.ts';
import { PREPARED } from './prepared.ts';
import {
  MAX_NS,
  MIN_NS,
  type CallStarts,
  type TimelinePosition,
  type WrittenCall,
} from './timeline.ts';
import { noteUnknownWindows, type UnjudgedCalls } from './window-notices.ts';
import { latestProjects, type ConversationProject } from '../model/calls.ts';

/** A conversation claimed for evaluation: its row lock is held until the transaction ends. */
export interface ClaimedConversation {
  workspaceId: string;
  conversationId: string;
  /** The earliest start (Unix ns) of what arrived since the last evaluation; null when unknown. */
  pendingFromNs: string | null;
  /** The last evaluated call; null before the first evaluation. */
  position: TimelinePosition | null;
  /**
   * The detectors' stored state (JSON), null before the first evaluation: the evaluator's copy
   * when it holds the one stored with the position (`stateToken`), else read from the row.
   */
  state: unknown;
  /** The token of the stored state (migration 0170); null when none was saved with one. */
  stateToken: string | null;
  /** `last_ingest_at` as PostgreSQL text (microseconds kept), to detect arrivals meanwhile. */
  lastIngestAt: string;
  /** Consecutive failed evaluations before this one. */
  failures: number;
  /**
   * The start (Unix ns) of the latest `rotscope import` that brought items of this
   * conversation: findings anchored on calls before it are history (never pushed). Null when
   * no import did.
   */
  historyBeforeNs: string | null;
  /**
   * The furthest call (start, Unix ns) an evaluation of the conversation has fed, even when a
   * rewind moved the position back since; null before the first. A finding created on a call at
   * or before it was found by judging that call again: it is late.
   */
  judgedNs?: string | null;
  /** The project the conversation runs in (the latest reported), null when none: mutes match on it. */
  project: string | null;
  /** The range of its calls' starts (migration 0190); null when unknown. */
  callStarts?: CallStarts | null;
  /**
   * The token of the calls an evaluator holds in memory for it (migration 0210, ./call-memo.ts);
   * null when none holds them, or the range of call starts is unknown.
   */
  callsToken?: string | null;
}

/** What one ingest transaction adds to a conversation. */
export interface IngestMark {
  conversationId: string;
  /** The earliest start (Unix ns) of the new calls and compactions. */
  fromNs: string;
  /** Number of new calls. */
  calls: number;
  /**
   * The earliest and latest start of the calls this mark's ingest wrote (new ones, or ones
   * replacing stored rows): the conversation's range of call starts widens to hold them.
   * Absent when it wrote none; absent with `calls` > 0, the range becomes unknown.
   */
  callStarts?: CallStarts;
  /** Quiet time (ms) the conversation needs before evaluation, beyond the default; 0 for none. */
  settleMs?: number;
  /** Set by an import: its start (Unix ns); calls before it are history (see ClaimedConversation). */
  historyBeforeNs?: string;
  /**
   * The rows of the new calls, when inserting them is all this mark's write did to the
   * conversation (./call-memo.ts); absent for any other change (merges, replacements, content or
   * windows given to stored calls, compactions, rows skipped as re-sent).
   */
  fresh?: readonly WrittenCall[];
}

/**
 * A row's range of call starts is kept: known, and moved with `last_ingest_at` by every write
 * since (a process of an earlier version moves `last_ingest_at` alone).
 */
const rangeKept = sql`conversations.calls_from_ns IS NOT NULL AND excluded.calls_from_ns IS NOT NULL
  AND conversations.calls_noted_at = conversations.last_ingest_at`;

/** The `calls_from_ns`/`calls_to_ns` of a conversation with no call: an empty range. */
const NO_CALLS: CallStarts = { fromNs: MAX_NS, toNs: MIN_NS };

/** What a mark tells of the calls it wrote: their starts, none written, or unknown starts. */
function startsOf(mark: IngestMark): CallStarts | null {
  return mark.callStarts ?? (mark.calls > 0 ? null : NO_CALLS);
}

/** The range holding both; null (unknown) when either is. */
function widened(a: CallStarts | null, b: CallStarts | null): CallStarts | null {
  if (a === null || b === null) return null;
  return {
    fromNs: BigInt(a.fromNs) <= BigInt(b.fromNs) ? a.fromNs : b.fromNs,
    toNs: BigInt(a.toNs) >= BigInt(b.toNs) ? a.toNs : b.toNs,
  };
}

/**
 * What one ingest batch tells the conversations it touched, in one statement (run in the
 * ingest transaction):
 * - `marks`: new items. The conversation is dirty (since now unless already dirty), its last
 *   ingest is now, `pending_from_ns` is lowered to the earliest new item, `call_count` grows.
 * - `projects`: where conversations run. Each one's project becomes the given one unless a
 *   later report is stored. A conversation seen first this way gets a row that is not dirty
 *   (nothing to evaluate yet), and one with only a project keeps its evaluation columns.
 * Rows are written in conversation id order, so concurrent ingests cannot deadlock here.
 */
export async function noteConversations(
  db: Db,
  workspaceId: string,
  marks: readonly IngestMark[],
  projects: readonly ConversationProject[] = [],
  callsTokens?: (fresh: ReadonlyMap<string, readonly WrittenCall[]>) => ReadonlyMap<string, string>,
): Promise<void> {
  if (marks.length === 0 && projects.length === 0) return;
  const merged = new Map<string, IngestMark>();
  for (const mark of marks) {
    const seen = merged.get(mark.conversationId);
    merged.set(
      mark.conversationId,
      seen
        ? {
            conversationId: mark.conversationId,
            fromNs: BigInt(seen.fromNs) <= BigInt(mark.fromNs) ? seen.fromNs : mark.fromNs,
            calls: seen.calls + mark.calls,
            ...withStarts(widened(startsOf(seen), startsOf(mark))),
            settleMs: Math.max(seen.settleMs ?? 0, mark.settleMs ?? 0),
            ...laterOf(seen.historyBeforeNs, mark.historyBeforeNs),
            ...(seen.fresh && mark.fresh ? { fresh: [...seen.fresh, ...mark.fresh] } : {}),
          }
        : mark,
    );
  }
  const projectOf = new Map(latestProjects(projects).map((p) => [p.conversationId, p]));
  const ids = [...new Set([...merged.keys(), ...projectOf.keys()])].sort();
  const fresh = new Map<string, readonly WrittenCall[]>();
  if (callsTokens)
    for (const [id, mark] of merged)
      if (mark.fresh && mark.fresh.length > 0) fresh.set(id, mark.fresh);
  const tokens = fresh.size > 0 && callsTokens ? callsTokens(fresh) : undefined;
  await db
    .insertInto('conversations')
    .values(
      ids.map((id) => {
        const mark = merged.get(id);
        const project = projectOf.get(id);
        const starts = mark ? startsOf(mark) : NO_CALLS;
        return {
          workspace_id: workspaceId,
          id,
          dirty: mark !== undefined,
          dirty_since: mark ? sql<Date>`now()` : null,
          pending_from_ns: mark?.fromNs ?? null,
          call_count: mark?.calls ?? 0,
          settle_ms: mark?.settleMs ?? 0,
          history_before_ns: mark?.historyBeforeNs ?? null,
          project: project?.project ?? null,
          project_at_ns: project?.atNs ?? null,
          calls_from_ns: starts?.fromNs ?? null,
          calls_to_ns: starts?.toNs ?? null,
          // the row's last_ingest_at: now() on insert
          calls_noted_at: sql<Date>`now()`,
          calls_token: tokens?.get(id) ?? null,
        };
      }),
    )
    .onConflict((oc) =>
      oc.columns(['workspace_id', 'id']).doUpdateSet({
        // a row that brings only a project leaves the evaluation columns as they are
        dirty: sql`conversations.dirty OR excluded.dirty`,
        dirty_since: sql`CASE WHEN NOT excluded.dirty THEN conversations.dirty_since WHEN conversations.dirty THEN COALESCE(conversations.dirty_since, now()) ELSE now() END`,
        last_ingest_at: sql`CASE WHEN excluded.dirty THEN now() ELSE conversations.last_ingest_at END`,
        pending_from_ns: sql`LEAST(conversations.pending_from_ns, excluded.pending_from_ns)`,
        call_count: sql`conversations.call_count + excluded.call_count`,
        settle_ms: sql`GREATEST(conversations.settle_ms, excluded.settle_ms)`,
        history_before_ns: sql`GREATEST(conversations.history_before_ns, excluded.history_before_ns)`,
        updated_at: sql`CASE WHEN excluded.dirty THEN now() ELSE conversations.updated_at END`,
        project: sql`CASE WHEN excluded.project_at_ns IS NULL THEN conversations.project WHEN conversations.project_at_ns IS NULL OR conversations.project_at_ns <= excluded.project_at_ns THEN excluded.project ELSE conversations.project END`,
        project_at_ns: sql`GREATEST(conversations.project_at_ns, excluded.project_at_ns)`,
        // unknown (null) stays unknown: a call outside a known range would go unread; so does
        // a range an earlier version's write left behind (calls_noted_at, migration 0190)
        calls_from_ns: sql`CASE WHEN ${rangeKept} THEN LEAST(conversations.calls_from_ns, excluded.calls_from_ns) END`,
        calls_to_ns: sql`CASE WHEN ${rangeKept} THEN GREATEST(conversations.calls_to_ns, excluded.calls_to_ns) END`,
        calls_noted_at: sql`CASE WHEN excluded.dirty THEN now() ELSE conversations.calls_noted_at END`,
        // kept by a write of new calls only, under the token the row holds (./call-memo.ts);
        // any other mark, or one of another token, leaves no evaluator's memory standing in
        calls_token: sql`CASE WHEN NOT excluded.dirty THEN conversations.calls_token
          WHEN conversations.calls_token = excluded.calls_token
           AND conversations.calls_noted_at = conversations.last_ingest_at
          THEN conversations.calls_token END`,
      }),
    )
    .execute();
}

/** {@link noteConversations} with new items only. */
export const markConversationsDirty = (db: Db, workspaceId: string, marks: readonly IngestMark[]) =>
  noteConversations(db, workspaceId, marks);

/**
 * The models the workspace's stored calls name (the response model, else the request model, as
 * the evaluator reads them), each once.
 */
export async function storedCallModels(db: Db, workspaceId: string): Promise<string[]> {
  const { rows } = await sql<{ model: string }>`
    SELECT DISTINCT COALESCE(response_model, request_model) AS model FROM llm_calls
     WHERE workspace_id = ${workspaceId}
       AND COALESCE(response_model, request_model) IS NOT NULL
     ORDER BY 1`.execute(db);
  return rows.map((row) => row.model);
}

/**
 * Marks for evaluation every conversation of the workspace with stored calls of these models
 * (the response model, else the request model), from its earliest such call, as ingest marks a
 * late call (`pending_from_ns` lowered, dirty since now unless already dirty): the evaluator
 * judges those calls again, e.g. under a window override saved since. One statement; rows are
 * locked in conversation id order first (ingest's order), so it cannot deadlock with ingest.
 * Returns how many conversations it marked.
 */
export async function markModelCallsDirty(
  db: Db,
  workspaceId: string,
  models: readonly string[],
): Promise<number> {
  if (models.length === 0) return 0;
  const { rows } = await sql<{ marked: string }>`
    WITH hit AS (
      SELECT conversation_id, min(start_ns) AS from_ns FROM llm_calls
       WHERE workspace_id = ${workspaceId}
         AND COALESCE(response_model, request_model) = ANY(${[...new Set(models)]}::text[])
       GROUP BY conversation_id
    ), locked AS (
      SELECT c.id, hit.from_ns FROM conversations c JOIN hit ON hit.conversation_id = c.id
       WHERE c.workspace_id = ${workspaceId}
       ORDER BY c.id FOR UPDATE OF c
    ), marked AS (
      UPDATE conversations c SET
        dirty = true,
        dirty_since = CASE WHEN c.dirty THEN COALESCE(c.dirty_since, now()) ELSE now() END,
        last_ingest_at = now(),
        -- a kept range stays kept (no call is added here)
        calls_noted_at = CASE WHEN c.calls_noted_at = c.last_ingest_at THEN now()
                              ELSE c.calls_noted_at END,
        pending_from_ns = LEAST(c.pending_from_ns, locked.from_ns),
        updated_at = now()
      FROM locked WHERE c.workspace_id = ${workspaceId} AND c.id = locked.id
      RETURNING c.id
    )
    SELECT count(*)::text AS marked FROM marked`.execute(db);
  return Number(rows[0]?.marked ?? 0);
}

/** The recorded project of each of these conversations (absent when none was reported). */
export async function projectsOf(
  db: Db,
  workspaceId: string,
  conversationIds: readonly string[],
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (conversationIds.length === 0) return found;
  const rows = await db
    .selectFrom('conversations')
    .select(['id', 'project'])
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', conversationIds)
    .where('project', 'is not', null)
    .execute();
  for (const row of rows) if (row.project !== null) found.set(row.id, row.project);
  return found;
}

/** Where a conversation's evaluation stands (`GET /api/conversations/:id`). */
export interface EvaluationStatus {
  /** Items arrived that no evaluation has judged yet (the conversation is dirty). */
  pending: boolean;
  /** The furthest call (its start, Unix ns) any evaluation fed; null before the first. */
  judgedNs: string | null;
  /** The last evaluation failure while it is still pending (the evaluator retries it). */
  error: string | null;
}

/** The conversation's evaluation status; undefined when it has no row. */
export async function evaluationStatus(
  db: Db,
  workspaceId: string,
  conversationId: string,
): Promise<EvaluationStatus | undefined> {
  const row = await db
    .selectFrom('conversations')
    .select([
      'dirty',
      'eval_error',
      sql<string | null>`GREATEST(judged_ns, evaluated_ns)::text`.as('judged'),
    ])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', conversationId)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    pending: row.dirty,
    judgedNs: row.judged,
    error: row.dirty ? row.eval_error : null,
  };
}

/**
 * Holds the evaluator loops off the given conversations for `ms` (run in the transaction that
 * marked them dirty): `rotscope import` evaluates what it imported itself once all its files are
 * in (claimConversations ignores the hold), so its summary counts the findings it made, however
 * long its files take; an import that dies leaves them to the loops when the hold ends. The
 * hold is the failure backoff's column: an evaluation clears it.
 */
export async function holdEvaluation(
  db: Db,
  workspaceId: string,
  conversationIds: readonly string[],
  ms: number,
): Promise<void> {
  if (conversationIds.length === 0) return;
  await db
    .updateTable('conversations')
    .set({
      eval_retry_at: sql<Date>`GREATEST(eval_retry_at, now() + ${Math.max(0, Math.round(ms))}::int * interval '1 millisecond')`,
    })
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', [...new Set(conversationIds)].sort())
    .where('dirty', '=', true)
    .execute();
}

/** A merged mark's `callStarts`: absent when unknown (its `calls` are more than 0 then). */
const withStarts = (starts: CallStarts | null): { callStarts?: CallStarts } =>
  starts === null ? {} : { callStarts: starts };

/** The later of two optional Unix ns times, as a partial IngestMark. */
function laterOf(a: string | undefined, b: string | undefined): { historyBeforeNs?: string } {
  if (a === undefined) return b === undefined ? {} : { historyBeforeNs: b };
  if (b === undefined) return { historyBeforeNs: a };
  return { historyBeforeNs: BigInt(a) >= BigInt(b) ? a : b };
}

/** The columns of a claimed conversation ({@link toClaimed}). */
const CLAIMED_COLUMNS = [
  'workspace_id',
  'id',
  'pending_from_ns',
  'evaluated_ns',
  'evaluated_span_id',
  'state_token',
  'eval_failures',
  'history_before_ns',
  'project',
  // the range of call starts, when kept by every write since (see migration 0190)
  sql<string | null>`CASE WHEN calls_noted_at = last_ingest_at THEN calls_from_ns END`.as(
    'calls_from_ns',
  ),
  sql<string | null>`CASE WHEN calls_noted_at = last_ingest_at THEN calls_to_ns END`.as(
    'calls_to_ns',
  ),
  // the token of calls held in memory, under the same rule (see migration 0210)
  sql<string | null>`CASE WHEN calls_noted_at = last_ingest_at THEN calls_token END`.as(
    'calls_token',
  ),
  sql<string>`last_ingest_at::text`.as('last_ingest_text'),
  sql<string | null>`GREATEST(judged_ns, evaluated_ns)`.as('judged_to_ns'),
] as const;

/**
 * Claims up to `limit` dirty conversations that are settled — no new item for `quietMs` — or
 * have been dirty for `maxWaitMs` (a steady stream never goes quiet), oldest ingest first,
 * skipping rows other transactions hold and conversations in failure backoff. Must run in a
 * transaction: the rows stay locked until it ends.
 */
export async function claimSettledConversations(
  db: Db,
  options: {
    quietMs: number;
    maxWaitMs?: number | undefined;
    limit: number;
    /** The rules' clock (settle and retry times). Default: the database's. */
    clock?: Clock | undefined;
    /** The evaluator's copies of stored states: a claimed row's is read only when it has none. */
    states?: StateCopies | undefined;
    /**
     * PostgreSQL: names the transaction `rotscope-evaluator` in `pg_stat_activity` and sets its
     * `idle_in_transaction_session_timeout` to this (ms; 0 leaves the server's), in the claim's
     * own statement (src/evaluator/loop.ts `claimIdleTimeoutMs` says why).
     */
    evaluatorSession?: { idleTimeoutMs: number } | undefined;
  },
): Promise<ClaimedConversation[]> {
  const { quietMs, maxWaitMs } = options;
  const timeoutMs = Math.max(0, Math.round(options.evaluatorSession?.idleTimeoutMs ?? 0));
  const now = nowOf(options.clock);
  const agoAtLeast = (ms: number, column: ReturnType<typeof sql.ref> | ReturnType<typeof sql>) =>
    sql<Date>`${now} - GREATEST(${Math.max(0, Math.round(ms))}::int, ${column}) * interval '1 millisecond'`;
  const rows = await db
    .selectFrom('conversations')
    .select(CLAIMED_COLUMNS)
    .where('dirty', '=', true)
    .where((eb) => {
      // A conversation's own settle time (see IngestMark.settleMs) stretches both waits.
      const quiet = eb('last_ingest_at', '<', agoAtLeast(quietMs, sql.ref('settle_ms')));
      return maxWaitMs === undefined
        ? quiet
        : eb.or([quiet, eb('dirty_since', '<', agoAtLeast(maxWaitMs, sql`2 * settle_ms`))]);
    })
    .where((eb) => eb.or([eb('eval_retry_at', 'is', null), eb('eval_retry_at', '<=', now)]))
    .$if(options.evaluatorSession !== undefined, (query) =>
      // a condition on no column: evaluated once, before any row is read (an InitPlan)
      query.where(
        sql<boolean>`(SELECT set_config('application_name', 'rotscope-evaluator', true) ||
          COALESCE(CASE WHEN ${timeoutMs}::int > 0 THEN set_config(
            'idle_in_transaction_session_timeout', ${timeoutMs}::int::text, true) END, '')) IS NOT NULL`,
      ),
    )
    .orderBy('last_ingest_at')
    .limit(Math.max(1, Math.floor(options.limit)))
    .forUpdate()
    .skipLocked()
    .modifyEnd(PREPARED)
    .execute();
  return withStates(db, rows.map(toClaimed), options.states);
}

/**
 * Claims the given dirty conversations of a workspace now, settled or not, waiting for an
 * evaluator that holds one (`rotscope import` evaluates what it imported). Must run in a
 * transaction: the rows stay locked until it ends.
 */
export async function claimConversations(
  db: Db,
  workspaceId: string,
  conversationIds: readonly string[],
  states?: StateCopies,
): Promise<ClaimedConversation[]> {
  if (conversationIds.length === 0) return [];
  const rows = await db
    .selectFrom('conversations')
    .select(CLAIMED_COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', [...conversationIds].sort())
    .where('dirty', '=', true)
    .orderBy('id')
    .forUpdate()
    .execute();
  return withStates(db, rows.map(toClaimed), states);
}

/**
 * An evaluator's copies of the states it stored (src/evaluator/state-copies.ts): the state
 * saved with `token` for a conversation, if it holds that one.
 */
export interface StateCopies {
  /** `at`: the row's position as `ns:spanId` (null before any call). */
  get(workspaceId: string, conversationId: string, token: string, at: string | null): unknown;
}

/** A random int8 as text: the tokens of stored states and of calls held in memory. */
export const randomToken = (): string => randomBytes(8).readBigInt64BE().toString();

/** A position as a state copy names it (`ns:spanId`; null: none). */
export const positionKey = (position: TimelinePosition | null): string | null =>
  position === null ? null : `${position.ns}:${position.spanId}`;

/**
 * Fills in the claimed rows' stored states: from `copies` where they hold the row's token,
 * else read in one query for the rows that have a position (a row never evaluated has none).
 */
async function withStates(
  db: Db,
  claimed: ClaimedConversation[],
  copies: StateCopies | undefined,
): Promise<ClaimedConversation[]> {
  const missing: ClaimedConversation[] = [];
  for (const row of claimed) {
    if (row.position === null) continue;
    const copy =
      row.stateToken === null
        ? undefined
        : copies?.get(
            row.workspaceId,
            row.conversationId,
            row.stateToken,
            positionKey(row.position),
          );
    if (copy === undefined) missing.push(row);
    else row.state = copy;
  }
  if (missing.length === 0) return claimed;
  const { rows } = await sql<{ n: string; state: unknown }>`
    SELECT w.n, c.state FROM unnest(${missing.map((m) => m.workspaceId)}::text[],
      ${missing.map((m) => m.conversationId)}::text[]) WITH ORDINALITY AS w(workspace_id, id, n)
    JOIN conversations c ON c.workspace_id = w.workspace_id AND c.id = w.id ${PREPARED}`.execute(
    db,
  );
  for (const row of rows) missing[Number(row.n) - 1]!.state = row.state ?? null;
  return claimed;
}

function toClaimed(row: {
  workspace_id: string;
  id: string;
  pending_from_ns: string | null;
  evaluated_ns: string | null;
  evaluated_span_id: string | null;
  state_token: string | null;
  eval_failures: number;
  history_before_ns: string | null;
  project: string | null;
  calls_from_ns: string | null;
  calls_to_ns: string | null;
  calls_token: string | null;
  last_ingest_text: string;
  judged_to_ns: string | null;
}): ClaimedConversation {
  return {
    workspaceId: row.workspace_id,
    conversationId: row.id,
    pendingFromNs: row.pending_from_ns === null ? null : String(row.pending_from_ns),
    position:
      row.evaluated_ns === null || row.evaluated_span_id === null
        ? null
        : { ns: String(row.evaluated_ns), spanId: row.evaluated_span_id },
    state: null,
    stateToken: row.state_token === null ? null : String(row.state_token),
    lastIngestAt: row.last_ingest_text,
    failures: row.eval_failures,
    historyBeforeNs: row.history_before_ns === null ? null : String(row.history_before_ns),
    judgedNs: row.judged_to_ns === null ? null : String(row.judged_to_ns),
    project: row.project,
    callStarts:
      row.calls_from_ns === null || row.calls_to_ns === null
        ? null
        : { fromNs: String(row.calls_from_ns), toNs: String(row.calls_to_ns) },
    callsToken: row.calls_token === null ? null : String(row.calls_token),
  };
}

/**
 * Stores an evaluation's result on the claimed row: the new position and state, and resets
 * the failure count. With `settled`, also clears `dirty`, `dirty_since` and `pending_from_ns` — but only if
 * `last_ingest_at` still equals the claimed value (nothing arrived meanwhile); otherwise the
 * conversation stays dirty and is evaluated again.
 */
export async function saveEvaluation(
  db: Db,
  claimed: PendingSave['claimed'],
  result: PendingSave['result'],
): Promise<void> {
  await saveEvaluations(db, [{ claimed, result }]);
}

/** One evaluation's result to store on its claimed row (see saveEvaluation). */
export interface PendingSave {
  claimed: Pick<ClaimedConversation, 'workspaceId' | 'conversationId' | 'lastIngestAt'>;
  result: {
    position: TimelinePosition | null;
    state: unknown;
    settled: boolean;
    /** Calls the evaluation could not judge for lack of a window: their models' notices. */
    unjudged?: readonly UnjudgedCalls[];
    /**
     * A new `calls_token` (./call-memo.ts): the evaluation read every call after its start from
     * the database and settled, and the evaluator's memory starts over from its position.
     * Absent: the token is left as it is (the evaluation changed no call).
     */
    callsToken?: string;
  };
}

/**
 * `saveEvaluation` for several claimed rows in one statement (an evaluator's batch); each row's
 * `judged_ns` keeps the furthest position ever stored (a rewind moves `evaluated_ns` back). The
 * batch's calls judged blind for lack of a window open their models' `window.unknown` notices
 * in a second statement, only when there are some (src/store/window-notices.ts). Returns each
 * save's new `state_token` and the size of its state as stored (src/evaluator/state-copies.ts).
 */
export async function saveEvaluations(
  db: Db,
  saves: readonly PendingSave[],
): Promise<Array<{ token: string; bytes: number }>> {
  if (saves.length === 0) return [];
  const tokens = saves.map(() => randomToken());
  const states = saves.map((save) => JSON.stringify(save.result.state));
  const unjudged = saves.flatMap((save) => save.result.unjudged ?? []);
  if (unjudged.length > 0) await noteUnknownWindows(db, unjudged);
  // One JSON parameter for the rows, each state spliced in as its JSON: no array literal to
  // escape, each state parsed once (issue 39).
  const rows = saves.map(({ claimed, result }, i) => {
    const row = JSON.stringify({
      workspace_id: claimed.workspaceId,
      id: claimed.conversationId,
      ns: result.position?.ns ?? null,
      span_id: result.position?.spanId ?? null,
      settled: result.settled,
      claimed_at: claimed.lastIngestAt,
      token: tokens[i],
      calls_token: result.callsToken ?? null,
    });
    return `${row.slice(0, -1)},"state":${states[i]}}`;
  });
  await sql`
    UPDATE conversations c SET
      evaluated_ns = v.ns, evaluated_span_id = v.span_id, state = v.state,
      state_token = v.token, calls_token = COALESCE(v.calls_token, c.calls_token),
      judged_ns = GREATEST(c.judged_ns, c.evaluated_ns, v.ns),
      dirty = CASE WHEN v.settled THEN c.last_ingest_at <> v.claimed_at ELSE true END,
      dirty_since = CASE WHEN v.settled AND c.last_ingest_at = v.claimed_at THEN NULL
                         ELSE c.dirty_since END,
      pending_from_ns = CASE WHEN v.settled AND c.last_ingest_at <> v.claimed_at
                             THEN c.pending_from_ns END,
      eval_failures = 0, eval_retry_at = NULL, eval_error = NULL, updated_at = now()
    FROM jsonb_to_recordset(${`[${rows.join(',')}]`}::jsonb) AS v(workspace_id text, id text,
      ns int8, span_id text, state jsonb, settled bool, claimed_at timestamptz, token int8,
      calls_token int8)
    WHERE c.workspace_id = v.workspace_id AND c.id = v.id ${PREPARED}`.execute(db);
  // each state's token, and its size as stored (JSON characters): what an evaluator's copy holds
  return tokens.map((token, i) => ({ token, bytes: states[i]!.length }));
}

/**
 * Marks the point after a claim in the evaluator's transaction: a conversation that fails rolls
 * back to it ({@link rollbackToClaim}) and its failure is recorded in the same transaction, so the
 * claim's row locks are held until the failure is committed. Rolled back to, a transaction that
 * failed (an error aborts it) can go on.
 */
export async function markClaim(db: Db): Promise<void> {
  await sql`SAVEPOINT claimed`.execute(db);
}

/** Undoes everything after {@link markClaim}, keeping the claim and its locks. */
export async function rollbackToClaim(db: Db): Promise<void> {
  await sql`ROLLBACK TO SAVEPOINT claimed`.execute(db);
}

/**
 * Records a failed evaluation (in the evaluator's transaction rolled back to its claim, or in
 * its own): the conversation stays dirty and is retried after `retryAfterMs`.
 */
export async function recordEvaluationFailure(
  db: Db,
  key: { workspaceId: string; conversationId: string },
  failure: { error: string; retryAfterMs: number },
  clock?: Clock,
): Promise<void> {
  await db
    .updateTable('conversations')
    .set({
      eval_failures: sql<number>`eval_failures + 1`,
      eval_retry_at: sql<Date>`${nowOf(clock)} + ${Math.max(0, Math.round(failure.retryAfterMs))}::int * interval '1 millisecond'`,
      eval_error: failure.error.slice(0, 1000),
    })
    .where('workspace_id', '=', key.workspaceId)
    .where('id', '=', key.conversationId)
    .execute();
}

/** A saved detector state and the position it was saved at. */
export interface Checkpoint {
  position: TimelinePosition;
  state: unknown;
}

/** Saves checkpoints (idempotent per position: a replay overwrites the same position). */
export async function saveCheckpoints(
  db: Db,
  key: { workspaceId: string; conversationId: string },
  checkpoints: readonly Checkpoint[],
): Promise<void> {
  if (checkpoints.length === 0) return;
  await db
    .insertInto('evaluation_checkpoints')
    .values(
      checkpoints.map((checkpoint) => ({
        workspace_id: key.workspaceId,
        conversation_id: key.conversationId,
        at_ns: checkpoint.position.ns,
        at_span_id: checkpoint.position.spanId,
        state: JSON.stringify(checkpoint.state),
      })),
    )
    .onConflict((oc) =>
      oc
        .columns(['workspace_id', 'conversation_id', 'at_ns', 'at_span_id'])
        .doUpdateSet({ state: (eb) => eb.ref('excluded.state'), created_at: sql<Date>`now()` }),
    )
    .execute();
}

/**
 * Returns the latest checkpoint strictly before `beforeNs` (none: replay from the start) and
 * deletes every checkpoint at or after it, since an item at `beforeNs` makes them stale.
 */
export async function rewindToCheckpoint(
  db: Db,
  key: { workspaceId: string; conversationId: string },
  beforeNs: string,
): Promise<Checkpoint | undefined> {
  await db
    .deleteFrom('evaluation_checkpoints')
    .where('workspace_id', '=', key.workspaceId)
    .where('conversation_id', '=', key.conversationId)
    .where('at_ns', '>=', beforeNs)
    .execute();
  const row = await db
    .selectFrom('evaluation_checkpoints')
    .select(['at_ns', 'at_span_id', 'state'])
    .where('workspace_id', '=', key.workspaceId)
    .where('conversation_id', '=', key.conversationId)
    .orderBy('at_ns', 'desc')
    .orderBy('at_span_id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row) return undefined;
  return { position: { ns: String(row.at_ns), spanId: row.at_span_id }, state: row.state };
}

/** Deletes every checkpoint of a conversation (its state is rebuilt from the start). */
export async function deleteCheckpoints(
  db: Db,
  key: { workspaceId: string; conversationId: string },
): Promise<void> {
  await db
    .deleteFrom('evaluation_checkpoints')
    .where('workspace_id', '=', key.workspaceId)
    .where('conversation_id', '=', key.conversationId)
    .execute();
}
