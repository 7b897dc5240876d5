/**
 * Reading an ingest request's body within its byte reservation: the body as sent, then its
 * gzip inflation, each chunk reserved before it is kept. A request whose next chunk the
 * budget cannot take stops there (the caller answers 429): memory in flight stays under the
 * budget whatever the clients send. A body that arrives slower than a floor rate stops too
 * (the caller answers 408): a slow client cannot hold its slot and bytes for the whole request
 * timeout.
 */
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Reservation } from './inflight.ts';

export type BodyResult =
  | { ok: true; body: Buffer }
  | { ok: false; reason: 'too_large' | 'over_budget' | 'invalid_gzip' | 'aborted' | 'too_slow' };

/**
 * The least rate a body must arrive at: after `graceMs` from the start of the body, at least
 * `bytesPerSecond` for every second past the grace must have arrived (or the whole declared
 * body). `bytesPerSecond` 0 turns it off.
 */
export interface MinimumRate {
  bytesPerSecond: number;
  graceMs: number;
}

/** How often (ms) a body's progress is checked against its minimum rate. */
const RATE_CHECK_MS = 250;

/**
 * Reads `stream` to its end into one buffer. `reserved` bytes of `reservation` are already
 * held for it (the Content-Length); more is reserved as more arrives. Stops (pausing the
 * stream) past `limit` bytes, when the budget refuses, or when the body falls behind `minimum`.
 */
export function readBody(
  stream: Readable,
  limit: number,
  reservation: Reservation,
  reserved: number,
  minimum: MinimumRate = { bytesPerSecond: 0, graceMs: 0 },
): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let allowance = reserved;
    let done = false;
    const started = performance.now();
    const tooSlow = () => {
      const late = performance.now() - started - minimum.graceMs;
      if (late <= 0) return false;
      const due = (minimum.bytesPerSecond * late) / 1000;
      return total < (reserved > 0 ? Math.min(reserved, due) : due);
    };
    let timer: NodeJS.Timeout | undefined;
    const finish = (result: BodyResult) => {
      if (done) return;
      done = true;
      clearInterval(timer);
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
      if (!result.ok) stream.pause();
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total > limit) return finish({ ok: false, reason: 'too_large' });
      if (total > allowance) {
        if (!reservation.grow(total - allowance))
          return finish({ ok: false, reason: 'over_budget' });
        allowance = total;
      }
      chunks.push(chunk);
    };
    const onEnd = () =>
      finish({ ok: true, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total) });
    const onError = () => finish({ ok: false, reason: 'aborted' });
    const onClose = () => finish({ ok: false, reason: 'aborted' });
    if (minimum.bytesPerSecond > 0) {
      timer = setInterval(() => {
        if (tooSlow()) finish({ ok: false, reason: 'too_slow' });
      }, RATE_CHECK_MS);
      timer.unref();
    }
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

/** The size a gzip member says it inflates to (its ISIZE trailer, mod 2^32); 0 when too short. */
function statedSize(body: Buffer): number {
  return body.length >= 18 ? body.readUInt32LE(body.length - 4) : 0;
}

/**
 * Inflates a gzip body, reserving each inflated chunk before it is kept. Stops past `limit`
 * inflated bytes (a gzip bomb inflates no further), when the budget refuses, or when `signal`
 * aborts (the client went away: nobody waits for the result).
 */
export function gunzipWithin(
  body: Buffer,
  limit: number,
  reservation: Reservation,
  signal?: AbortSignal,
): Promise<BodyResult> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve({ ok: false, reason: 'aborted' });
    const gunzip = createGunzip();
    // Filled in place when the stated size is right (no second copy of the body); chunks
    // past it (a multi-member or lying body) are collected and joined at the end.
    const expected = Math.min(statedSize(body), limit);
    let target: Buffer | undefined;
    const extra: Buffer[] = [];
    let total = 0;
    let filled = 0;
    let done = false;
    const finish = (result: BodyResult) => {
      if (done) return;
      done = true;
      signal?.removeEventListener('abort', onAbort);
      if (!result.ok) gunzip.destroy();
      resolve(result);
    };
    const onAbort = () => finish({ ok: false, reason: 'aborted' });
    signal?.addEventListener('abort', onAbort, { once: true });
    gunzip.on('data', (chunk: Buffer) => {
      if (done) return;
      if (total + chunk.length > limit) return finish({ ok: false, reason: 'too_large' });
      if (target === undefined && expected > 0) {
        // The stated size is reserved (and allocated) once; a lie costs only what it states.
        if (!reservation.grow(expected)) return finish({ ok: false, reason: 'over_budget' });
        target = Buffer.allocUnsafe(expected);
      }
      if (target && extra.length === 0 && filled + chunk.length <= expected) {
        chunk.copy(target, filled);
        filled += chunk.length;
      } else {
        if (!reservation.grow(chunk.length)) return finish({ ok: false, reason: 'over_budget' });
        extra.push(chunk);
      }
      total += chunk.length;
    });
    gunzip.on('end', () => {
      const head = target ? target.subarray(0, filled) : Buffer.alloc(0);
      finish({
        ok: true,
        body: extra.length === 0 ? head : Buffer.concat([head, ...extra], total),
      });
    });
    gunzip.on('error', () => finish({ ok: false, reason: 'invalid_gzip' }));
    gunzip.end(body);
  });
}
