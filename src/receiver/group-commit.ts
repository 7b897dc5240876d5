/**
 * Group commit for the ingest path: requests that arrive while a transaction is open wait and
 * share the next one, so one COMMIT (one WAL flush) holds the spans of several requests. Each
 * request's writes run in a savepoint of their own, so a request the database refuses (a bad
 * value) fails alone; each request's promise settles only after the COMMIT that holds its rows
 * (a 200 still means stored). The advisory locks of every request in a group are taken
 * together, in one order, before any write, and what the requests tell their conversations is
 * written once for the group, in one order, just before COMMIT (src/store/conversation-notes.ts),
 * so two groups never wait on each other in a cycle. A deadlock or serialization failure that
 * still happens is retried (a job in its savepoint, the conversations' write in its own).
 * A job whose `signal` aborts (its client went away) before it runs is dropped: its promise
 * rejects with AbandonedError at once, nothing of it is written, and a shutdown does not wait
 * for it (the client saw no 200 and sends the batch again).
 */
import type { CallMemo } from '../store/call-memo.ts';
import { ConversationNotes } from '../store/conversation-notes.ts';
import { isDatabaseUnavailable, isRetryableConflict } from '../store/connection-errors.ts';
import type { Store } from '../store/db.ts';
import { lockIngestKeys } from '../store/ingest.ts';
import { kyselyOn, type RawConnection } from '../store/raw-connection.ts';
import { prepareStaging, UNIQUE_VIOLATION, type IngestTx } from '../store/staging.ts';

export interface IngestJob<T> {
  /** The evidence keys the job's writes must be serialized on (see lockIngestKeys). */
  keys: readonly string[];
  run(tx: IngestTx): Promise<T>;
  /** Aborted when nobody waits for the outcome any more (the client is gone): the job is dropped. */
  signal?: AbortSignal | undefined;
}

/** The rejection of a job dropped before it ran because its signal aborted. */
export class AbandonedError extends Error {
  constructor() {
    super('the client went away before its batch was committed; nothing of it was stored');
    this.name = 'AbandonedError';
  }
}

interface Queued {
  job: IngestJob<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface GroupCommitOptions {
  /** Transactions open at once. Default 2 on PostgreSQL (one fills while one flushes), 1 on PGlite. */
  transactions?: number;
  /** Requests in one transaction at most. Default 16. */
  maxJobs?: number;
  /**
   * The evaluator's memory of new calls (src/store/call-memo.ts), when this process evaluates:
   * the new calls each transaction inserted are handed to it as it commits.
   */
  callMemo?: CallMemo | undefined;
}

/** Runs of a job (or of the group's conversations write) that lost a race, before giving up. */
const CONFLICT_ATTEMPTS = 4;

export class GroupCommitter {
  readonly #store: Store;
  readonly #transactions: number;
  readonly #maxJobs: number;
  readonly #memo: CallMemo | undefined;
  #queue: Queued[] = [];
  #open = 0;

  constructor(store: Store, options: GroupCommitOptions = {}) {
    this.#store = store;
    this.#transactions = options.transactions ?? (store.kind === 'pglite' ? 1 : 2);
    this.#maxJobs = options.maxJobs ?? 16;
    this.#memo = options.callMemo;
  }

  /** Runs the job in the next transaction; resolves with its value after that transaction commits. */
  submit<T>(job: IngestJob<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const { signal } = job;
      if (signal?.aborted) return reject(new AbandonedError());
      const queued: Queued = { job, resolve: resolve as (value: unknown) => void, reject };
      this.#queue.push(queued);
      // Dropped from the queue at once when abandoned; once in a group, before it runs.
      signal?.addEventListener(
        'abort',
        () => {
          const at = this.#queue.indexOf(queued);
          if (at < 0) return;
          this.#queue.splice(at, 1);
          reject(new AbandonedError());
        },
        { once: true },
      );
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#open < this.#transactions && this.#queue.length > 0) {
      const group = this.#queue.splice(0, this.#maxJobs);
      this.#open++;
      void this.#commit(group).finally(() => {
        this.#open--;
        this.#pump();
      });
    }
  }

  async #commit(group: Queued[]): Promise<void> {
    let connection: RawConnection;
    try {
      connection = await this.#store.connect();
    } catch (error) {
      for (const item of group) item.reject(error);
      return;
    }
    let broken: Error | undefined;
    const conversations = new ConversationNotes();
    try {
      const tx: IngestTx = {
        db: kyselyOn(connection),
        copyIn: (text, data) => connection.copyIn(text, data),
        staging: await prepareStaging(connection),
        resent: false,
        conversations,
      };
      await connection.query('BEGIN');
      await lockIngestKeys(
        tx.db,
        group.flatMap((item) => item.job.keys),
      );
      const outcomes: Array<() => void> = [];
      let savepoint = false; // whether the previous job's savepoint is still to be released
      for (const item of group) {
        if (item.job.signal?.aborted) {
          item.reject(new AbandonedError()); // nothing of it written: settled now
          continue;
        }
        const outcome = await runInSavepoint(connection, tx, item.job, savepoint);
        savepoint = true;
        outcomes.push(
          outcome.ok ? () => item.resolve(outcome.value) : () => item.reject(outcome.error),
        );
      }
      await writeConversationNotes(connection, tx, this.#memo);
      await connection.query('COMMIT');
      conversations.committed();
      for (const settle of outcomes) settle();
    } catch (error) {
      // rolled back, or lost with its connection at COMMIT: either way, not known to be stored
      conversations.abandoned('unknown');
      await connection.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError as Error;
      });
      if (isDatabaseUnavailable(error)) broken = error as Error;
      for (const item of group) item.reject(error);
    } finally {
      connection.release(broken);
    }
  }
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Runs one job in a savepoint (releasing the previous job's, when `releasePrevious`, in the
 * same round trip; COMMIT releases the last one): on an error the database raised for this
 * job's data, rolls back to it and reports the error (after up to {@link CONFLICT_ATTEMPTS}
 * runs for a deadlock or serialization failure; once more with `resent` after a unique
 * violation: some of its rows exist, an exporter sent the batch again); on a lost connection,
 * throws (the whole group fails). What a successful run noted for its conversations joins the
 * group's notes; a failed run's is dropped with its writes.
 */
async function runInSavepoint(
  connection: RawConnection,
  tx: IngestTx,
  job: IngestJob<unknown>,
  releasePrevious: boolean,
): Promise<Outcome> {
  let resent = false;
  // a savepoint rolled back to stays, for the job's next attempt
  await connection.query(
    releasePrevious ? 'RELEASE SAVEPOINT ingest_job; SAVEPOINT ingest_job' : 'SAVEPOINT ingest_job',
  );
  for (let attempt = 1; ; attempt++) {
    const conversations = new ConversationNotes();
    try {
      const value = await job.run({ ...tx, resent, conversations });
      tx.conversations.absorb(conversations);
      return { ok: true, value };
    } catch (error) {
      if (isDatabaseUnavailable(error)) throw error;
      await connection.query('ROLLBACK TO SAVEPOINT ingest_job');
      const code = (error as { code?: string }).code;
      if (code === UNIQUE_VIOLATION && !resent) {
        resent = true;
        continue;
      }
      if (attempt < CONFLICT_ATTEMPTS && isRetryableConflict(error)) continue;
      return { ok: false, error };
    }
  }
}

/**
 * Writes what the group's jobs noted for their conversations (one order for the whole
 * transaction), in a savepoint of its own: a deadlock or serialization failure is rolled back
 * and run again, up to {@link CONFLICT_ATTEMPTS} times; anything else fails the group.
 */
async function writeConversationNotes(
  connection: RawConnection,
  tx: IngestTx,
  memo: CallMemo | undefined,
): Promise<void> {
  if (tx.conversations.empty) return;
  await connection.query('SAVEPOINT ingest_conversations');
  for (let attempt = 1; ; attempt++) {
    try {
      await tx.conversations.write(tx.db, memo);
      return;
    } catch (error) {
      if (
        isDatabaseUnavailable(error) ||
        attempt >= CONFLICT_ATTEMPTS ||
        !isRetryableConflict(error)
      )
        throw error;
      await connection.query('ROLLBACK TO SAVEPOINT ingest_conversations');
    }
  }
}
