/**
 * Reading an ingest request's body within its byte reservation: the body as sent, then its
 * gzip inflation, each chunk reserved before it is kept. A request whose next chunk the
 * budget cannot take stops there (the caller answers 429): memory in flight stays under the
 * budget whatever the clients send.
 */
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Reservation } from './inflight.ts';

export type BodyResult =
  | { ok: true; body: Buffer }
  | { ok: false; reason: 'too_large' | 'over_budget' | 'invalid_gzip' | 'aborted' };

/**
 * Reads `stream` to its end into one buffer. `reserved` bytes of `reservation` are already
 * held for it (the Content-Length); more is reserved as more arrives. Stops (pausing the
 * stream) past `limit` bytes or when the budget refuses.
 */
export function readBody(
  stream: Readable,
  limit: number,
  reservation: Reservation,
  reserved: number,
): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let allowance = reserved;
    let done = false;
    const finish = (result: BodyResult) => {
      if (done) return;
      done = true;
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
 * inflated bytes (a gzip bomb inflates no further) or when the budget refuses.
 */
export function gunzipWithin(
  body: Buffer,
  limit: number,
  reservation: Reservation,
): Promise<BodyResult> {
  return new Promise((resolve) => {
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
      if (!result.ok) gunzip.destroy();
      resolve(result);
    };
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
