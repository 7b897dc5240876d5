/**
 * What the receiver has in flight: ingest slots (the 429 limit) and the ingest work (decode,
 * normalize, commit) that a shutdown must let finish before the store closes.
 */
import type { ServerResponse } from 'node:http';

/**
 * A fixed number of slots, each held by one request from its arrival until its response
 * closes, however it ends: answered, refused, timed out, or aborted by the client before,
 * during or after its body. A slot is released exactly once. One owner (workspace) holds at
 * most `perOwnerMax` of them, so the others always find `max - perOwnerMax` slots that it
 * cannot take, whatever it sends (slow bodies included).
 */
export class InflightSlots {
  #used = 0;
  readonly #byOwner = new Map<string, number>();

  /**
   * @param max slots; `tryAcquire` refuses once all are held.
   * @param perOwnerMax slots one owner may hold (at most `max`).
   * @param onChange called with the number of slots held after every change (a gauge).
   */
  constructor(
    readonly max: number,
    readonly perOwnerMax: number = max,
    private readonly onChange: (used: number) => void = () => {},
  ) {}

  /** Slots held now. */
  get used(): number {
    return this.#used;
  }

  /** Slots held now by `owner`. */
  usedBy(owner: string): number {
    return this.#byOwner.get(owner) ?? 0;
  }

  /**
   * Takes a slot for `owner`'s request answered by `response`: 'full' when all are held,
   * 'owner_full' when `owner` holds its share. The slot is freed when `response` emits 'close',
   * which Node emits once the response is sent or its connection is gone (client abort,
   * timeout, destroyed socket).
   */
  tryAcquire(owner: string, response: ServerResponse): 'acquired' | 'full' | 'owner_full' {
    if (this.#used >= this.max) return 'full';
    const held = this.usedBy(owner);
    if (held >= this.perOwnerMax) return 'owner_full';
    this.#used += 1;
    this.#byOwner.set(owner, held + 1);
    this.onChange(this.#used);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.#used -= 1;
      const left = this.usedBy(owner) - 1;
      if (left > 0) this.#byOwner.set(owner, left);
      else this.#byOwner.delete(owner);
      this.onChange(this.#used);
    };
    if (response.closed) release();
    else response.once('close', release);
    return 'acquired';
  }
}

/**
 * Aborted when the client of `response` goes away before its answer is sent (the response
 * closes unfinished): work for it that has not been committed yet is dropped, since the client
 * saw no 200 and will send the batch again.
 */
export function clientGone(response: ServerResponse): AbortSignal {
  const gone = new AbortController();
  const onClose = () => {
    if (!response.writableFinished) gone.abort();
  };
  if (response.closed) onClose();
  else response.once('close', onClose);
  return gone.signal;
}

/**
 * Work in progress that a shutdown waits for (ingest commits), and the connections it will
 * answer on: a shutdown closes every other connection at its deadline but lets these answer.
 */
export class PendingWork {
  readonly #pending = new Set<Promise<unknown>>();
  readonly #busy = new Map<object, number>();

  /** Runs `work` for the request on connection `owner` and remembers it until it settles. */
  run<T>(work: () => Promise<T>, owner: object): Promise<T> {
    this.#busy.set(owner, (this.#busy.get(owner) ?? 0) + 1);
    const promise = work();
    const settled = promise.then(
      () => undefined,
      () => undefined,
    );
    this.#pending.add(settled);
    void settled.then(() => {
      this.#pending.delete(settled);
      const left = (this.#busy.get(owner) ?? 1) - 1;
      if (left > 0) this.#busy.set(owner, left);
      else this.#busy.delete(owner);
    });
    return promise;
  }

  /** Whether work for a request on connection `owner` is running. */
  isBusy(owner: object): boolean {
    return this.#busy.has(owner);
  }

  /** Number of pieces of work not yet settled. */
  get size(): number {
    return this.#pending.size;
  }

  /** Resolves once every piece of work started so far (and any started meanwhile) has settled. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all(this.#pending);
  }
}

/**
 * Bytes of request bodies in flight (as read, and after gzip inflation), shared by every
 * ingest request: a request reserves what it will hold before it holds it, and gives it all
 * back when its response closes. A reservation is refused when it would take the total past
 * `max`, or one owner's (workspace's) share past `perOwnerMax`, so one workspace cannot take
 * the whole budget. A reservation that is the only one in flight (of its owner, or at all) is
 * never refused: a single request is bounded by the body limits, and must be able to pass.
 */
export class ByteBudget {
  #used = 0;
  readonly #byOwner = new Map<string, number>();
  #open = 0;
  readonly #openByOwner = new Map<string, number>();

  /**
   * @param max bytes in flight over all owners.
   * @param perOwnerMax bytes in flight for one owner (at most `max`).
   * @param onChange called with the bytes held after every change (a gauge).
   */
  constructor(
    readonly max: number,
    readonly perOwnerMax: number,
    private readonly onChange: (used: number) => void = () => {},
  ) {}

  /** Bytes held now. */
  get used(): number {
    return this.#used;
  }

  /** Bytes held now by `owner`. */
  usedBy(owner: string): number {
    return this.#byOwner.get(owner) ?? 0;
  }

  /**
   * Opens a reservation of `bytes` for `owner`, released when `response` closes; undefined
   * (nothing reserved) when the budget or the owner's share cannot take it.
   */
  open(owner: string, bytes: number, response: ServerResponse): Reservation | undefined {
    if (!this.#fits(owner, bytes, 0)) return undefined;
    this.#open += 1;
    this.#openByOwner.set(owner, (this.#openByOwner.get(owner) ?? 0) + 1);
    const reservation = new Reservation(owner, this);
    this.#take(owner, bytes);
    reservation.bytes = bytes;
    const close = () => {
      if (reservation.closed) return;
      reservation.closed = true;
      this.#give(owner, reservation.bytes);
      this.#open -= 1;
      const left = (this.#openByOwner.get(owner) ?? 1) - 1;
      if (left > 0) this.#openByOwner.set(owner, left);
      else this.#openByOwner.delete(owner);
    };
    if (response.closed) close();
    else response.once('close', close);
    return reservation;
  }

  /** @internal Grows a reservation (see {@link Reservation.grow}). */
  grow(reservation: Reservation, bytes: number): boolean {
    if (reservation.closed) return false;
    if (!this.#fits(reservation.owner, bytes, reservation.bytes)) return false;
    this.#take(reservation.owner, bytes);
    reservation.bytes += bytes;
    return true;
  }

  /** Whether `owner` may add `bytes` to a reservation already holding `held`. */
  #fits(owner: string, bytes: number, held: number): boolean {
    const ownerUsed = this.#byOwner.get(owner) ?? 0;
    const alone = this.#used === held; // nothing else in flight
    const ownerAlone = ownerUsed === held;
    const totalOk = alone || this.#used + bytes <= this.max;
    const ownerOk = ownerAlone || ownerUsed + bytes <= this.perOwnerMax;
    return totalOk && ownerOk;
  }

  #take(owner: string, bytes: number): void {
    this.#used += bytes;
    this.#byOwner.set(owner, (this.#byOwner.get(owner) ?? 0) + bytes);
    this.onChange(this.#used);
  }

  #give(owner: string, bytes: number): void {
    this.#used -= bytes;
    const left = (this.#byOwner.get(owner) ?? bytes) - bytes;
    if (left > 0) this.#byOwner.set(owner, left);
    else this.#byOwner.delete(owner);
    this.onChange(this.#used);
  }
}

/** One request's share of a {@link ByteBudget}: bytes it holds until its response closes. */
export class Reservation {
  bytes = 0;
  closed = false;

  constructor(
    readonly owner: string,
    private readonly budget: ByteBudget,
  ) {}

  /** Reserves `bytes` more; false (nothing reserved) when the budget cannot take them. */
  grow(bytes: number): boolean {
    return this.budget.grow(this, bytes);
  }
}

/**
 * A per-owner (workspace) rate limit on bytes, as a token bucket that may go into debt: a
 * request is admitted while its owner's bucket is not in debt, and what it turns out to cost
 * (its inflated body) is charged after. The bucket refills at `bytesPerSecond` up to one
 * second's worth. `bytesPerSecond` 0 turns the limit off.
 */
export class ByteRateLimit {
  readonly #buckets = new Map<string, { level: number; at: number }>();

  constructor(
    readonly bytesPerSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  #bucket(owner: string): { level: number; at: number } {
    const now = this.now();
    let bucket = this.#buckets.get(owner);
    if (!bucket) {
      if (this.#buckets.size >= 10_000) this.#buckets.clear(); // bounded; a reset is harmless
      bucket = { level: this.bytesPerSecond, at: now };
      this.#buckets.set(owner, bucket);
    }
    const refill = ((now - bucket.at) / 1000) * this.bytesPerSecond;
    bucket.level = Math.min(this.bytesPerSecond, bucket.level + refill);
    bucket.at = now;
    return bucket;
  }

  /** 0 when `owner` may send now, else the seconds until its debt is paid off. */
  waitSeconds(owner: string): number {
    if (this.bytesPerSecond <= 0) return 0;
    const bucket = this.#bucket(owner);
    return bucket.level >= 0 ? 0 : Math.ceil(-bucket.level / this.bytesPerSecond);
  }

  /** Charges `bytes` to `owner`. */
  charge(owner: string, bytes: number): void {
    if (this.bytesPerSecond <= 0) return;
    this.#bucket(owner).level -= bytes;
  }
}
