/**
 * The evaluator loop: every `evaluatorPollMs` it claims settled conversations (dirty, no new
 * items for `evaluatorQuietMs`) one at a time, each in its own transaction with
 * `FOR UPDATE SKIP LOCKED`, and evaluates them (evaluate.ts). Any number of processes can run
 * it against one PostgreSQL database: a conversation is evaluated by one of them at a time,
 * and everything an evaluation writes commits atomically with its new position.
 */
import type { Clock } from '../model/clock.ts';
import type { Config } from '../config.ts';
import { DETECTORS } from '../detectors/index.ts';
import type { Detector } from '../detectors/types.ts';
import type { AlertSettings } from '../store/alerts.ts';
import {
  claimSettledConversations,
  markClaim,
  positionKey,
  recordEvaluationFailure,
  rollbackToClaim,
  saveEvaluations,
  type ClaimedConversation,
  type PendingSave,
} from '../store/conversations.ts';
import {
  prefetchTimelinePages,
  type PrefetchedPage,
  type TimelinePosition,
} from '../store/timeline.ts';
import { newCallsToken, type CallMemo } from '../store/call-memo.ts';
import {
  describeError,
  isDatabaseUnavailable,
  isRetryableConflict,
} from '../store/connection-errors.ts';
import type { Store } from '../store/db.ts';
import { createEventLog } from '../log/event-log.ts';
import {
  DEFAULT_MAX_CALLS_PER_TRANSACTION,
  DEFAULT_PAGE_SIZE,
  evaluateConversation,
  prefetchPosition,
  samePosition,
  type EvaluateOptions,
  type EvaluationResult,
} from './evaluate.ts';
import { StateCopies } from './state-copies.ts';
import { writeFindings, type PendingFindings } from './write-findings.ts';

/** The logging the evaluator needs (pino and fastify loggers fit). */
export interface EvaluatorLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface EvaluatorOptions {
  store: Pick<Store, 'db'> & Partial<Pick<Store, 'kind'>>;
  config: Pick<Config, 'evaluatorQuietMs' | 'evaluatorPollMs'> &
    Partial<Pick<Config, 'logEventIntervalMs'>>;
  log: EvaluatorLog;
  /** The detectors to run. Default: the four of src/detectors (`DETECTORS`). */
  detectors?: readonly Detector[];
  /** Called after each evaluation commits (metrics, latency benchmarks, tests). */
  onEvaluated?: (result: EvaluationResult) => void;
  /** Called after each batch commits: how many conversations its claim asked for, and got. */
  onBatch?: (batch: { limit: number; claimed: number }) => void;
  /** Tuning passed to each evaluation (page size, transaction size, checkpoint interval). */
  tuning?: Omit<EvaluateOptions, 'detectors'>;
  /**
   * A conversation that keeps receiving items (never quiet for `evaluatorQuietMs`) is evaluated
   * anyway once it has been dirty this long (ms). Default max(1000, 2 × evaluatorQuietMs).
   */
  maxWaitMs?: number;
  /** Most conversations one `runOnce` evaluates before yielding to the poll timer. Default 1000. */
  maxPerRun?: number;
  /**
   * Conversations claimed and evaluated in one transaction (one claim query, one commit, the
   * alert settings read once per workspace), as long as their calls together stay within
   * `maxCallsPerTransaction`. A bigger batch holds its claims longer: ingest into a claimed
   * conversation waits for the commit. Default 16.
   */
  batchSize?: number;
  /**
   * Under a backlog the batches grow: after a claim that came back full, the next claim asks
   * for twice as many, up to this; after one that came back short, half as many, down to
   * `batchSize`, from one poll to the next. A batch's fixed costs (the claim, the batch read's
   * planning, the save, the commit) are then shared by more conversations when there are many
   * to evaluate, and a quiet stream keeps small batches and short claims. Default 64 (never
   * below `batchSize`).
   */
  maxBatchSize?: number;
  /**
   * Conversations evaluated at once, each on its own connection. Default 4 on PostgreSQL
   * (keep it below the pool size), 1 on PGlite (a single connection).
   */
  concurrency?: number;
  /**
   * PostgreSQL only: a claim is a row lock held by the evaluation's open transaction, so a
   * process that stops mid-evaluation without its connection closing (frozen, suspended, its
   * host cut off) would hold the conversation, and block ingest into it, for as long as the
   * server keeps that session. The transaction sets `idle_in_transaction_session_timeout` to
   * this (ms): the server ends such a session after this long idle, which releases the claim
   * to the other processes. Each evaluation is also named `rotscope-evaluator` in
   * `pg_stat_activity` while it runs. Default 30000; 0 leaves the server's setting.
   */
  claimIdleTimeoutMs?: number;
  /** The clock settle and retry times are judged by (src/model/clock.ts). Default: the database's. */
  clock?: Clock;
  /**
   * The memory of new calls ingest in this process hands over as it commits them
   * (src/store/call-memo.ts): a claimed conversation whose new calls it holds exactly is judged
   * from it, without reading them back. Absent: every evaluation reads its calls.
   */
  callMemo?: CallMemo | undefined;
  /**
   * Reads the calls of conversations judged from `callMemo` too, and fails their evaluation
   * when the two differ (`callMemo.stats.differed`): the test suite runs with it on.
   */
  verifyCallMemo?: boolean;
  /**
   * Conversations whose detector state is kept in memory between evaluations (./state-copies.ts;
   * the least recently evaluated are dropped first, and beyond 16 MB of states as stored).
   * Default 10,000; 0 keeps none (every evaluation reads the stored state).
   */
  stateCopies?: number;
}

export interface Evaluator {
  /** Stops polling and waits for the evaluation in progress. Safe to call twice. */
  stop(): Promise<void>;
  /**
   * Evaluates settled conversations until none is left (or `maxPerRun`); resolves to the
   * number evaluated. Runs after a run in progress in this evaluator (the poll loop's) ends.
   * Never rejects: failures are logged and put the conversation in backoff. After `stop()`
   * it evaluates nothing.
   */
  runOnce(): Promise<number>;
}

/**
 * The wait before the next poll after `failedRuns` consecutive runs that could not reach the
 * database: the poll interval doubling up to 2 s (no jitter: one process, one loop).
 */
export function outageDelayMs(pollMs: number, failedRuns: number): number {
  return failedRuns === 0 ? pollMs : Math.max(pollMs, Math.min(2_000, pollMs * 2 ** failedRuns));
}

/** Backoff after `failures` consecutive failures of a conversation: 1 s doubling to 5 min, ±20% jitter. */
export function failureBackoffMs(failures: number, random: () => number = Math.random): number {
  const base = Math.min(300_000, 1000 * 2 ** Math.max(0, failures - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

/**
 * A batch's findings the database refused for a reason of the data (not the database, not a
 * lost race) when more than one of its conversations had some: which one causes it is not
 * known. The batch rolls back, and its conversations are claimed again one at a time.
 */
class BatchFindingsRefused extends Error {
  constructor(
    readonly conversations: number,
    cause: unknown,
  ) {
    super(`the findings of ${conversations} conversations were refused: ${describeError(cause)}`, {
      cause,
    });
  }
}

/**
 * Writes a batch's findings together (no savepoint: one statement less each way). When only one
 * conversation has findings, a failure is laid at it (`blame` names it before the write); when
 * several have, a failure for a reason of the data throws {@link BatchFindingsRefused}.
 */
async function writeBatchFindings(
  trx: Parameters<typeof writeFindings>[0],
  found: readonly PendingFindings[],
  blame: (conversation: ClaimedConversation) => void,
): Promise<void> {
  const writing = found.filter((pending) => pending.upserts.length > 0);
  if (writing.length === 0) return;
  if (writing.length === 1) {
    blame(writing[0]!.claimed);
    return writeFindings(trx, writing);
  }
  try {
    await writeFindings(trx, writing);
  } catch (error) {
    if (isDatabaseUnavailable(error) || isRetryableConflict(error)) throw error;
    throw new BatchFindingsRefused(writing.length, error);
  }
}

/**
 * After a batch committed, what its saves tell the memory of new calls: a conversation judged
 * from it drops what it judged; one read from the database that stored a new calls token starts
 * a new epoch at its position, with the compactions after it the read saw.
 */
function afterCommit(
  memo: CallMemo,
  save: PendingSave,
  fromMemo: ReadonlyMap<ClaimedConversation, string>,
  read: ReadonlyMap<ClaimedConversation, PrefetchedPage>,
): void {
  const claimed = save.claimed as ClaimedConversation;
  const position: TimelinePosition | null = save.result.position;
  const token = fromMemo.get(claimed);
  if (token !== undefined) memo.judged(claimed, token, position);
  else if (save.result.callsToken !== undefined)
    memo.started(claimed, save.result.callsToken, position, read.get(claimed)?.compactions ?? []);
}

/** Starts the evaluator loop; `stop()` ends it. */
export function startEvaluator(options: EvaluatorOptions): Evaluator {
  const { store, config, log } = options;
  const detectors = options.detectors ?? DETECTORS;
  const maxPerRun = options.maxPerRun ?? 1000;
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? 16));
  const maxBatchSize = Math.max(batchSize, Math.floor(options.maxBatchSize ?? 64));
  const maxWaitMs = options.maxWaitMs ?? Math.max(1000, 2 * config.evaluatorQuietMs);
  const concurrency = Math.max(1, options.concurrency ?? (store.kind === 'postgres' ? 4 : 1));
  const evaluateOptions: EvaluateOptions = { ...options.tuning, detectors };
  const maxCallsPerTransaction =
    evaluateOptions.maxCallsPerTransaction ?? DEFAULT_MAX_CALLS_PER_TRANSACTION;
  const pageSize = evaluateOptions.pageSize ?? DEFAULT_PAGE_SIZE;
  const claimIdleTimeoutMs = Math.max(0, Math.round(options.claimIdleTimeoutMs ?? 30_000));
  const events = createEventLog(log, { intervalMs: config.logEventIntervalMs ?? 10_000 });
  const copiesKept = Math.max(0, Math.floor(options.stateCopies ?? 10_000));
  const copies = copiesKept > 0 ? new StateCopies(copiesKept) : undefined;
  const memo = options.callMemo;
  const verifyMemo = options.verifyCallMemo === true;

  /**
   * The new calls of a claimed conversation from the memory of new calls, when it holds them
   * exactly and the evaluation starts from the stored position (no late item, no failure); the
   * range of call starts must be known too (else a process of an earlier version wrote).
   */
  const memoPageOf = (claimed: ClaimedConversation, limit: number) => {
    if (!memo || !claimed.callsToken || !claimed.callStarts) return undefined;
    const after = prefetchPosition(claimed);
    if (!samePosition(after, claimed.position)) return undefined;
    const page = memo.pageFor(
      { ...claimed, callsToken: claimed.callsToken },
      claimed.position,
      limit,
    );
    if (page) memo.stats.used += 1;
    return page;
  };

  /** Verifying: the page from memory must be the page the database holds. */
  const verifyMemoPage = (
    claimed: ClaimedConversation,
    fromMemory: PrefetchedPage,
    stored: PrefetchedPage,
  ) => {
    memo!.stats.verified += 1;
    // Two fields no detector reads change in stored rows without a mark, and are not compared:
    // a call's reported cost (filled in from log events) and a compaction's source key (another
    // source joined it).
    const calls = (page: PrefetchedPage) =>
      JSON.stringify(page.calls.map(({ costUsd: _cost, ...call }) => call));
    const compactions = (page: PrefetchedPage) =>
      JSON.stringify(page.compactions.map(({ sourceKey: _key, ...compaction }) => compaction));
    const held = calls(fromMemory);
    const want = calls(stored);
    const heldCompactions = compactions(fromMemory);
    const wantCompactions = compactions(stored);
    if (held === want && heldCompactions === wantCompactions) return;
    memo!.stats.differed += 1;
    log.error(
      {
        workspaceId: claimed.workspaceId,
        conversationId: claimed.conversationId,
        held: held.slice(0, 4000),
        stored: want.slice(0, 4000),
        heldCompactions: heldCompactions.slice(0, 2000),
        storedCompactions: wantCompactions.slice(0, 2000),
      },
      'calls held in memory differ from the stored rows (a bug)',
    );
    throw new Error(
      `calls of conversation ${claimed.conversationId} held in memory differ from the stored rows`,
    );
  };
  let stopping = false;
  let failing = false;
  /** Consecutive runs that could not reach the database (0 when it is reachable). */
  let failedRuns = 0;
  let wake: (() => void) | undefined;
  /**
   * How many conversations the next claim asks for: doubles after a claim that came back full
   * (a backlog), up to `maxBatchSize`; halves after a short one, down to `batchSize`. Kept
   * from one poll to the next, so a steady load keeps its large batches.
   */
  let claimLimit = batchSize;
  /**
   * Claims still to make one conversation at a time: after a batch's findings were refused
   * ({@link BatchFindingsRefused}), as many as it had conversations, so the refusal is laid at
   * the one that causes it and the others go on.
   */
  let claimsAlone = 0;
  const nextClaimLimit = (limit: number, full: boolean) =>
    full ? Math.min(2 * limit, maxBatchSize) : Math.max(batchSize, Math.floor(limit / 2));

  /**
   * Claims a batch of conversations and evaluates them one after the other in the claim's
   * transaction, until the batch's calls reach `maxCallsPerTransaction` (the rest of the batch
   * is released at the commit, still dirty). A conversation that fails rolls the batch back to
   * its claim, is put in backoff in the same transaction (its lock held until then, so nothing
   * claims it meanwhile) and is reported as `failed` (the others are claimed again at once); a
   * lost race rolls the whole batch back and is `failed` too; a failure before the claim, or a database that cannot be reached (no
   * conversation is at fault: the claims rolled back, they stay dirty), rejects.
   */
  async function evaluateNext(
    limit: number,
  ): Promise<
    | { status: 'none' }
    | { status: 'evaluated'; results: EvaluationResult[]; more: boolean; full: boolean }
    | { status: 'failed' }
  > {
    let current: ClaimedConversation | undefined;
    /** The states this batch stored, with their tokens: kept in memory once it commits. */
    let stored: Array<{ save: PendingSave; token: string; bytes: number }> = [];
    /** The claimed conversations judged from the memory of new calls, with the token they had. */
    const fromMemo = new Map<ClaimedConversation, string>();
    /** The first pages read from the database, by claimed conversation. */
    const read = new Map<ClaimedConversation, PrefetchedPage>();
    /** What is logged of a conversation that failed (its failure recorded in the batch). */
    let failed: Record<string, unknown> | undefined;
    try {
      let more = false;
      let full = false;
      let claimedCount = 0;
      const results = await store.db.transaction().execute(async (trx) => {
        const claimed = await claimSettledConversations(trx, {
          quietMs: config.evaluatorQuietMs,
          maxWaitMs,
          limit,
          clock: options.clock,
          states: copies,
          evaluatorSession:
            store.kind === 'postgres' ? { idleTimeoutMs: claimIdleTimeoutMs } : undefined,
        });
        // A short batch took every conversation settled now: no need to claim again.
        claimedCount = claimed.length;
        full = claimed.length === limit;
        more = full;
        if (claimed.length === 0) return [];
        // A conversation that fails rolls the batch back to here and records its failure before
        // the claim's locks go: no other worker or process claims it again meanwhile.
        await markClaim(trx);
        try {
          const alertSettings = new Map<string, AlertSettings>();
          // The first page of every claimed conversation, in two queries for the batch; at most
          // the transaction's calls in all (64 long conversations would read 32,000 rows at
          // once): a conversation with more left reads the rest page by page.
          const prefetchLimit = Math.min(
            pageSize,
            Math.max(1, Math.ceil(maxCallsPerTransaction / Math.max(1, claimed.length))),
          );
          // Conversations whose new calls this process holds exactly are judged from memory; the
          // others' first pages are read in one batch (verifying: all of them).
          const memoPages = claimed.map((conversation) => memoPageOf(conversation, prefetchLimit));
          const toRead = claimed.filter((_, i) => verifyMemo || memoPages[i] === undefined);
          const pages = await prefetchTimelinePages(
            trx,
            toRead.map((conversation) => ({
              workspaceId: conversation.workspaceId,
              conversationId: conversation.conversationId,
              after: prefetchPosition(conversation),
              within: conversation.callStarts,
            })),
            prefetchLimit,
          );
          for (const [i, conversation] of toRead.entries()) read.set(conversation, pages[i]!);
          const prefetched = claimed.map((conversation, i) => {
            const page = memoPages[i];
            if (!page) return read.get(conversation)!;
            fromMemo.set(conversation, conversation.callsToken!);
            current = conversation; // a difference fails this conversation (backoff, then a read)
            if (verifyMemo) verifyMemoPage(conversation, page, read.get(conversation)!);
            current = undefined;
            return page;
          });
          const saves: PendingSave[] = [];
          const found: PendingFindings[] = [];
          const done: EvaluationResult[] = [];
          let callsLeft = maxCallsPerTransaction;
          for (const [i, conversation] of claimed.entries()) {
            if (callsLeft <= 0) break;
            current = conversation;
            const result = await evaluateConversation(trx, conversation, {
              ...evaluateOptions,
              maxCallsPerTransaction: callsLeft,
              alertSettings,
              prefetched: prefetched[i]!,
              saveLater: (save) => saves.push(save),
              findingsLater: (pending) => found.push(pending),
              // read from the database: the memory of its calls can start over from here
              ...(memo && !fromMemo.has(conversation) ? { newCallsToken: newCallsToken() } : {}),
            });
            callsLeft -= result.calls;
            result.callsFrom = fromMemo.has(conversation) ? 'memory' : 'database';
            done.push(result);
          }
          current = undefined;
          await writeBatchFindings(trx, found, (conversation) => (current = conversation));
          current = undefined;
          const tokens = await saveEvaluations(trx, saves);
          stored = saves.map((save, i) => ({ save, ...tokens[i]! }));
          // Claimed conversations left for another transaction (not reached, or not finished).
          if (done.length < claimed.length || done.some((result) => !result.settled)) more = true;
          return done;
        } catch (error) {
          if (!current || error instanceof BatchFindingsRefused) throw error;
          if (isDatabaseUnavailable(error) || isRetryableConflict(error)) throw error;
          await rollbackToClaim(trx);
          const key = { workspaceId: current.workspaceId, conversationId: current.conversationId };
          const failures = current.failures + 1;
          const retryAfterMs = failureBackoffMs(failures);
          await recordEvaluationFailure(
            trx,
            key,
            { error: describeError(error), retryAfterMs },
            options.clock,
          );
          failed = { ...key, failures, retryAfterMs, err: error };
          return [];
        }
      });
      if (failed) {
        log.error(failed, 'conversation evaluation failed');
        return { status: 'failed' };
      }
      for (const { save, token, bytes } of stored)
        copies?.set(
          save.claimed.workspaceId,
          save.claimed.conversationId,
          { token, bytes, at: positionKey(save.result.position) },
          save.result.state,
        );
      if (memo) for (const { save } of stored) afterCommit(memo, save, fromMemo, read);
      if (results.length === 0) return { status: 'none' };
      options.onBatch?.({ limit, claimed: claimedCount });
      return { status: 'evaluated', results, more, full };
    } catch (error) {
      if (error instanceof BatchFindingsRefused) {
        claimsAlone = Math.max(claimsAlone, error.conversations);
        log.warn(
          { conversations: error.conversations, error: describeError(error.cause) },
          'a batch of findings was refused: its conversations are evaluated one at a time',
        );
        return { status: 'failed' };
      }
      // Lost a race with another transaction (a deadlock, a serialization failure): nothing is
      // wrong with the conversation; it stays dirty and is claimed again, with no backoff.
      if (current && !isDatabaseUnavailable(error) && isRetryableConflict(error))
        return { status: 'failed' };
      throw error;
    }
  }

  /** After a commit: the findings event and the `onEvaluated` callback of one evaluation. */
  function reportEvaluated(result: EvaluationResult): void {
    const { workspaceId, conversationId, findingsCreated, findingsEscalated } = result;
    if (findingsCreated + findingsEscalated > 0)
      events.event(
        'info',
        'findings',
        workspaceId,
        { conversationId, created: findingsCreated, escalated: findingsEscalated },
        'evaluator: findings created',
      );
    try {
      options.onEvaluated?.(result);
    } catch (error) {
      log.error({ err: error }, 'onEvaluated callback threw');
    }
  }

  /** One run at a time per evaluator: a `runOnce` during the loop's run waits for it. */
  let running: Promise<number> = Promise.resolve(0);
  function runOnce(): Promise<number> {
    running = running.then(runAll, runAll);
    return running;
  }

  async function runAll(): Promise<number> {
    let evaluated = 0;
    let budget = maxPerRun;
    /** The first failure of a worker in this run (the database itself, or a bug). */
    let failure: { reason: unknown } | undefined;
    const workers: Array<Promise<void>> = [];
    /**
     * Adds a worker whose promise never rejects: its failure is kept for the end of the run.
     * Workers join while others are awaited, so a rejection must be handled where it starts.
     */
    const addWorker = () =>
      workers.push(
        worker().catch((reason: unknown) => {
          failure ??= { reason };
        }),
      );
    /** Starts the other workers once a batch comes back full (more settled than one batch). */
    const spread = () => {
      while (workers.length < concurrency) addWorker();
    };
    const worker = async (): Promise<void> => {
      while (!stopping && budget > 0) {
        const alone = claimsAlone > 0;
        if (alone) claimsAlone -= 1;
        const limit = alone ? 1 : claimLimit;
        const next = await evaluateNext(limit);
        if (failing) {
          failing = false;
          log.info({}, 'evaluator reaches the database again');
        }
        if (next.status === 'none') {
          if (!alone) claimLimit = nextClaimLimit(limit, false);
          return;
        }
        if (next.status === 'failed') {
          budget -= 1;
          continue;
        }
        if (!alone) claimLimit = nextClaimLimit(limit, next.full);
        budget -= next.results.length;
        evaluated += next.results.length;
        for (const result of next.results) reportEvaluated(result);
        if (!next.more) return;
        spread();
      }
    };
    // One worker claims first (an idle poll costs one claim); when its batch is full, the
    // others join, claiming different conversations (SKIP LOCKED); one finding none stops.
    addWorker();
    // Workers join while others are awaited: wait until a round adds none.
    for (let waited = 0; waited < workers.length;) {
      waited = workers.length;
      await Promise.all(workers.slice(0, waited));
    }
    failedRuns = failure ? failedRuns + 1 : 0;
    if (failure && !failing) {
      // The database itself failed (claim or failure bookkeeping): log once until it recovers.
      failing = true;
      if (isDatabaseUnavailable(failure.reason))
        log.warn(
          { error: describeError(failure.reason) },
          'evaluator cannot reach the database; retrying with backoff up to 2 s',
        );
      else log.error({ err: failure.reason }, 'evaluator run failed; retrying with backoff');
    }
    return evaluated;
  }

  // Poll: wait, run, repeat. The first run comes after one poll interval, so a caller that
  // starts the evaluator and calls runOnce itself (tests) is never raced by the timer.
  const loop = (async () => {
    while (!stopping) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, outageDelayMs(config.evaluatorPollMs, failedRuns));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
      if (!stopping) await runOnce();
    }
  })();

  return {
    runOnce,
    async stop() {
      stopping = true;
      wake?.();
      await loop;
    },
  };
}
