/** Deterministic ids for rows that arrive without span ids (logs, transcripts): re-imports are idempotent. */
import { createHash } from 'node:crypto';

/** The first `hexChars` hex digits of sha256(text). */
export function hashHex(text: string, hexChars: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, hexChars);
}

/** A 32-hex trace id derived from a session id. */
export function traceIdFor(sessionId: string): string {
  return hashHex(sessionId, 32);
}

/** A 16-hex span id derived from a stable key. */
export function spanIdFor(key: string): string {
  return hashHex(key, 16);
}
