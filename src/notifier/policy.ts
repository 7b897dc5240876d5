/**
 * The delivery policy: what a send result is, which failures are worth retrying, how long
 * to wait before the next try. Pure functions, time passed in. Senders use
 * {@link classifyHttp} to turn a response into a result; the delivery loop alone decides
 * when (and whether) to try again.
 */
import type { HttpOutcome } from './outbound.ts';

/**
 * What one send came to. Senders return these and never throw for expected failures.
 * - `ok`: delivered (`code` is the HTTP status or SMTP reply code).
 * - `retry`: worth trying again later (network error, timeout, 408, 429, 5xx, SMTP 4xx);
 *   `afterMs` is the earliest retry the receiver asked for (Retry-After).
 * - `permanent`: trying again will not help (other 4xx, redirects, refused or invalid
 *   destination, bad configuration, SMTP 5xx).
 */
export type SendResult =
  | { status: 'ok'; code: number }
  | { status: 'retry'; afterMs?: number; code?: number; error: string }
  | { status: 'permanent'; code?: number; error: string };

/** Statuses that are retried: request timeout, too many requests, and every 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * Parses a `Retry-After` value, either delay-seconds or an HTTP date, into milliseconds from
 * `nowMs`. Returns undefined when absent or unparsable; never negative.
 */
export function parseRetryAfter(
  value: string | string[] | undefined,
  nowMs: number,
): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // HTTP dates (IMF-fixdate, RFC 850, asctime) all start with the day's name.
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

/** A short, single-line excerpt of a response body for the attempt log. */
function excerpt(body: string): string {
  const line = body.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/** Maps an HTTP outcome to a send result (2xx ok; 3xx never followed, permanent). */
export function classifyHttp(outcome: HttpOutcome, nowMs: number): SendResult {
  switch (outcome.kind) {
    case 'network':
      return { status: 'retry', error: outcome.error };
    case 'timeout':
      return { status: 'retry', error: outcome.error };
    case 'blocked':
      return { status: 'permanent', error: `refused: ${outcome.error}` };
    case 'invalid_url':
      return { status: 'permanent', error: outcome.error };
    case 'response': {
      const code = outcome.status;
      if (code >= 200 && code < 300) return { status: 'ok', code };
      const detail = excerpt(outcome.body);
      if (code >= 300 && code < 400) {
        const location = outcome.headers.location;
        return {
          status: 'permanent',
          code,
          error: `redirect not followed (HTTP ${code}${location ? ` to ${location}` : ''})`,
        };
      }
      const error = `HTTP ${code}${detail ? `: ${detail}` : ''}`;
      if (isRetryableStatus(code)) {
        const afterMs = parseRetryAfter(outcome.headers['retry-after'], nowMs);
        return afterMs === undefined
          ? { status: 'retry', code, error }
          : { status: 'retry', code, error, afterMs };
      }
      return { status: 'permanent', code, error };
    }
  }
}

export interface BackoffOptions {
  /** Delay before the second attempt (ms). Default 1000. */
  initialMs: number;
  /** Largest delay between attempts (ms). Default 1 h. */
  maxMs: number;
}

export const DEFAULT_BACKOFF: Readonly<BackoffOptions> = Object.freeze({
  initialMs: 1000,
  maxMs: 60 * 60 * 1000,
});

/**
 * The wait after failed attempt number `attempt` (1-based): exponential from `initialMs`,
 * capped at `maxMs`, with "equal jitter" (between half and all of the step) so that
 * deliveries failing together do not retry together. `random` is in [0, 1).
 * A `Retry-After` wait is honoured: the result is never shorter than `retryAfterMs`.
 */
export function backoffMs(
  attempt: number,
  options: BackoffOptions,
  random: number,
  retryAfterMs?: number,
): number {
  const step = Math.min(options.maxMs, options.initialMs * 2 ** Math.max(0, attempt - 1));
  const jittered = Math.round(step / 2 + (step / 2) * random);
  return Math.max(jittered, retryAfterMs ?? 0);
}
