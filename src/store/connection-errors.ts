/**
 * Tells a database that cannot be reached (down, restarting, refusing connections, a session
 * terminated by an administrator, a pool that cannot connect in time) from every other error.
 * Such a failure is retryable: requests answer 503 with Retry-After, background loops back off
 * and try again; it is never a bug and never a reason to exit.
 */

/** Error codes (Node socket errors and SQLSTATEs) that mean "the database is unavailable". */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '57P01', // admin_shutdown: pg_terminate_backend, or a fast/smart shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or shutting down
  '53300', // too_many_connections
]);

/**
 * Messages of errors that `pg`, `pg-pool` and kysely raise without a code when the connection
 * is lost or cannot be made.
 */
const UNAVAILABLE_MESSAGE =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Postgres connection has been discarded|pool is closed/i;

/** Whether `test` holds for `error` or an error in its `cause` chain (at most 5 deep). */
function inCauseChain(
  error: unknown,
  test: (e: { code?: unknown; message?: unknown; errors?: unknown }) => boolean,
): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth++) {
    const e = current as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (test(e)) return true;
    current = e.cause;
  }
  return false;
}

/**
 * True when `error` (or an error in its `cause` chain, or in an AggregateError's `errors`)
 * says the database cannot be reached: SQLSTATE class 08 (connection exception), 57P01/57P02/
 * 57P03, 53300, socket errors (ECONNREFUSED, ECONNRESET, ...) and the connection-loss and
 * pool-timeout errors of `pg`.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return inCauseChain(
    error,
    (e) =>
      (typeof e.code === 'string' && (UNAVAILABLE_CODES.has(e.code) || /^08/.test(e.code))) ||
      (typeof e.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message)) ||
      (Array.isArray(e.errors) && e.errors.some(isDatabaseUnavailable)),
  );
}

/** One short line for logs: `CODE: message` of the error (no stack). */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

/**
 * SQLSTATEs of a transaction that lost a race with another one and may succeed if run again:
 * deadlock_detected, serialization_failure, lock_not_available.
 */
const CONFLICT_CODES = new Set(['40P01', '40001', '55P03']);

/**
 * True when `error` (or its cause) is a conflict between concurrent transactions: nothing is
 * wrong with the data or the database, and the same writes can succeed later. Ingest retries
 * these itself; one that still reaches a client is answered 503 with Retry-After, never 500.
 */
export function isRetryableConflict(error: unknown): boolean {
  return inCauseChain(error, (e) => typeof e.code === 'string' && CONFLICT_CODES.has(e.code));
}

/** A failure a client should send again later (503 + Retry-After): unavailable or a conflict. */
export function isRetryableFailure(error: unknown): boolean {
  return isDatabaseUnavailable(error) || isRetryableConflict(error);
}
