/**
 * What the receiver has in flight: ingest slots (the 429 limit) and the ingest work (decode,
 * normalize, commit) that a shutdown must let finish before the store closes.
 */
import type { ServerResponse } from 'node:http';

/**
 * A fixed number of slots, each held by one request from its arrival until its response
 * closes, however it ends: answered, refused, timed out, or aborted by the client before,
 * during or after its body. A slot is released exactly once.
 */
export class InflightSlots {
  #used = 0;

  /**
   * @param max slots; `tryAcquire` refuses once all are held.
   * @param onChange called with the number of slots held after every change (a gauge).
   */
  constructor(
    readonly max: number,
    private readonly onChange: (used: number) => void = () => {},
  ) {}

  /** Slots held now. */
  get used(): number {
    return this.#used;
  }

  /**
   * Takes a slot for the request answered by `response` unless all are held. The slot is
   * freed when `response` emits 'close', which Node emits once the response is sent or its
   * connection is gone (client abort, timeout, destroyed socket).
   */
  tryAcquire(response: ServerResponse): boolean {
    if (this.#used >= this.max) return false;
    this.#used += 1;
    this.onChange(this.#used);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.#used -= 1;
      this.onChange(this.#used);
    };
    if (response.closed) release();
    else response.once('close', release);
    return true;
  }
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
