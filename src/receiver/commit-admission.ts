/**
 * Admission by what the store can commit (docs/scaling.md, "Admission by commit capacity").
 *
 * The ingest slots bound how many requests are in flight, not how long they wait: when the
 * database commits fewer batches a second than arrive, every slot fills with requests queued
 * for the commit, and each waits `slots / commit rate` (17 s at p99 under twice the load the
 * store could take). This admits a batch only if the batches ahead of it can be committed
 * within `maxWaitMs`, by Little's law: expected wait = batches in commit / commits per second.
 * The rest get 429 at once, before their body is read.
 *
 * - "In commit" is a request whose body has arrived, from then until its answer (decode,
 *   normalize, the group commit). Requests still sending their body are not counted: a slow
 *   body holds no store capacity, so it cannot be used to refuse others (the slots, the
 *   per-workspace share and the minimum body rate bound those). A burst that arrives at once is
 *   admitted up to the slots; the standing queue is what this bounds.
 * - The commit rate is measured, not configured: batches answered per second during which at
 *   least one was in commit (busy time), over windows of about a second of busy time, smoothed.
 *   Until the first batch is answered every request is admitted, and one batch is always
 *   admitted when none is in commit, so the estimate recovers however low it fell.
 */

/** Busy time (ms) over which one sample of the commit rate is taken. */
const WINDOW_MS = 1_000;
/** Weight of the newest sample in the smoothed rate. */
const SMOOTHING = 0.5;

export class CommitAdmission {
  #inCommit = 0;
  /** Commits per second of busy time, smoothed; undefined until the first batch is answered. */
  #rate: number | undefined;
  #windowDone = 0;
  #windowBusyMs = 0;
  #lastChange = 0;

  /**
   * @param maxWaitMs longest expected wait for a commit of a batch admitted now; 0 admits all.
   * @param now a monotonic clock (ms).
   */
  constructor(
    readonly maxWaitMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Batches in commit now. */
  get inCommit(): number {
    return this.#inCommit;
  }

  /** The measured commit rate (batches per second of busy time), undefined before the first. */
  get rate(): number | undefined {
    return this.#rate;
  }

  /** Expected wait (ms) of a batch admitted now for its commit; 0 when nothing is measured yet. */
  expectedWaitMs(): number {
    if (this.#rate === undefined) return 0;
    return ((this.#inCommit + 1) / this.#rate) * 1000;
  }

  /** Whether a batch arriving now would be committed within `maxWaitMs`. */
  admits(): boolean {
    return this.maxWaitMs <= 0 || this.#inCommit === 0 || this.expectedWaitMs() <= this.maxWaitMs;
  }

  /** Runs `commit` (a request whose body has arrived, until it is answered) and counts it. */
  async run<T>(commit: () => Promise<T>): Promise<T> {
    this.#account();
    this.#inCommit += 1;
    try {
      return await commit();
    } finally {
      this.#account();
      this.#inCommit -= 1;
      this.#windowDone += 1;
      if (this.#rate === undefined || this.#windowBusyMs >= WINDOW_MS) this.#sample();
    }
  }

  /** Adds the time since the last change to the busy time, if a batch was in commit. */
  #account(): void {
    const now = this.now();
    if (this.#inCommit > 0) this.#windowBusyMs += now - this.#lastChange;
    this.#lastChange = now;
  }

  #sample(): void {
    const rate = this.#windowDone / (Math.max(this.#windowBusyMs, 1) / 1000);
    this.#rate = this.#rate === undefined ? rate : SMOOTHING * rate + (1 - SMOOTHING) * this.#rate;
    this.#windowDone = 0;
    this.#windowBusyMs = 0;
  }
}
