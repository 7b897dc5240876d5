/** Awaiting a notifier's claim rounds instead of sleeping (issue 40). */

export interface PollCounter {
  /** Pass as the notifier's `onPoll`. */
  onPoll: () => void;
  /** Resolves once the notifier has looked `n` more times (see pollCounter). */
  after: (n: number) => Promise<void>;
}

/**
 * Counts a notifier's looks for due deliveries (its `onPoll`): `after(n)` resolves once it has
 * looked `n` more times. A round under way when it is called counts, so `n` ≥ 2 means at least
 * one whole round began afterwards: what that round did not send, it had nothing due to send.
 * A round launches its sends and does not wait for them: a test that awaits rounds also checks
 * the deliveries' rows, where a send under way already shows.
 */
export function pollCounter(): PollCounter {
  let count = 0;
  let waiting: Array<{ at: number; resolve: () => void }> = [];
  return {
    onPoll() {
      count += 1;
      const due = waiting.filter((w) => w.at <= count);
      waiting = waiting.filter((w) => w.at > count);
      for (const w of due) w.resolve();
    },
    after(n) {
      return new Promise<void>((resolve) => waiting.push({ at: count + n, resolve }));
    },
  };
}
