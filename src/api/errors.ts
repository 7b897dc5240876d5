/** Classifies store failures: a database that cannot be reached is retryable (503), not a bug. */

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '08000',
  '08001',
  '08003',
  '08006',
]);

export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth++) {
    const e = current as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
    if (
      typeof e.message === 'string' &&
      /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|pool is closed/i.test(
        e.message,
      )
    ) {
      return true;
    }
    if (Array.isArray(e.errors) && e.errors.some(isDatabaseUnavailable)) return true;
    current = e.cause;
  }
  return false;
}

/**
 * A value the database refused (SQLSTATE class 22, data exception): the request's data is at
 * fault, not the server, and sending it again will not help.
 */
export function isDataError(error: unknown): error is { code: string; message: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('22');
}
