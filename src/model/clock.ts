/**
 * The clock that the rules depending on time read: settle times and evaluation retries (the
 * evaluator), delivery leases, retries and give-up (the notifier). It is the database's clock
 * (`now()`: one clock for every process that shares the database), moved ahead by `aheadMs`.
 * Servers run at 0; a test advances it instead of sleeping until a rule's time has come
 * (test/helpers/clock.ts).
 */
export interface Clock {
  /** How far ahead of the database's clock the rules' "now" is (ms). */
  readonly aheadMs: number;
}

/** The database's own clock. */
export const DATABASE_CLOCK: Clock = Object.freeze({ aheadMs: 0 });
