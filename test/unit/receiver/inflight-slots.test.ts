/** InflightSlots (src/receiver/inflight.ts): the total and one workspace's share, released once. */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientGone, InflightSlots } from '../../../src/receiver/inflight.ts';

/** A response that closes when told, finished (answered) or not (its client went away). */
function response() {
  const emitter = new EventEmitter() as EventEmitter & {
    closed: boolean;
    writableFinished: boolean;
  };
  emitter.closed = false;
  emitter.writableFinished = false;
  return {
    raw: emitter as unknown as ServerResponse,
    close(finished: boolean) {
      emitter.writableFinished = finished;
      emitter.closed = true;
      emitter.emit('close');
    },
  };
}

describe('InflightSlots', () => {
  it("holds one owner to its share and the total to the maximum; a slot frees on its response's close", () => {
    const slots = new InflightSlots(4, 2);
    const a = [response(), response(), response()];
    expect(a.map((r) => slots.tryAcquire('a', r.raw))).toEqual([
      'acquired',
      'acquired',
      'owner_full',
    ]);
    const b = [response(), response(), response()];
    expect(b.map((r) => slots.tryAcquire('b', r.raw))).toEqual(['acquired', 'acquired', 'full']);
    expect(slots.used).toBe(4);
    a[0]!.close(false);
    a[0]!.close(false); // released once
    expect(slots.used).toBe(3);
    expect(slots.usedBy('a')).toBe(1);
    expect(slots.tryAcquire('c', response().raw)).toBe('acquired');
  });
});

describe('clientGone', () => {
  it('aborts when the response closes unanswered, not when it was answered', () => {
    const answered = response();
    const abandoned = response();
    const answeredSignal = clientGone(answered.raw);
    const abandonedSignal = clientGone(abandoned.raw);
    answered.close(true);
    abandoned.close(false);
    expect(answeredSignal.aborted).toBe(false);
    expect(abandonedSignal.aborted).toBe(true);
  });
});
