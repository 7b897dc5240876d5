/**
 * Classifies store failures for HTTP answers: unavailable or a lost race between transactions
 * (503 + Retry-After), or bad data (400).
 */

export {
  isDatabaseUnavailable,
  isRetryableConflict,
  isRetryableFailure,
} from '../store/connection-errors.ts';

/**
 * A value the database refused (SQLSTATE class 22, data exception): the request's data is at
 * fault, not the server, and sending it again will not help.
 */
export function isDataError(error: unknown): error is { code: string; message: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('22');
}
