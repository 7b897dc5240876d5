/**
 * A clock for the rules that depend on time (src/model/clock.ts) that a test moves on by hand:
 * instead of sleeping until a settle time, a lease or a give-up time has passed, the test
 * advances the clock past it. The database's own clock still runs underneath, so a rule's
 * time comes once the advanced amount plus the real time since is past it.
 */
import type { Clock } from '../../src/model/clock.ts';

export class TestClock implements Clock {
  #aheadMs = 0;

  get aheadMs(): number {
    return this.#aheadMs;
  }

  /** Moves the rules' "now" `ms` ahead. */
  advance(ms: number): void {
    this.#aheadMs += ms;
  }
}

/**
 * Timers a test moves on by hand (src/notifier/notifier.ts NotifierTimers): a send's deadline
 * fires when the test advances past it, and durations are measured on the same hand-moved
 * time, so a 4 s delivery timeout is judged without waiting 4 s.
 */
export class ManualTimers {
  #now = 0;
  #due: Array<{ at: number; fn: () => void }> = [];
  #changed: Array<() => void> = [];

  now(): number {
    return this.#now;
  }

  after(ms: number, fn: () => void): () => void {
    const entry = { at: this.#now + ms, fn };
    this.#due.push(entry);
    this.#notify();
    return () => {
      this.#due = this.#due.filter((e) => e !== entry);
      this.#notify();
    };
  }

  /** Timers set and not yet fired nor cancelled. */
  get pending(): number {
    return this.#due.length;
  }

  /** Resolves once at least `count` timers are pending (e.g. that many sends are in flight). */
  async waitForPending(count: number): Promise<void> {
    while (this.#due.length < count)
      await new Promise<void>((resolve) => this.#changed.push(resolve));
  }

  /** Moves time `ms` on, firing the timers due by then in the order they are due. */
  advance(ms: number): void {
    this.#now += ms;
    const due = this.#due.filter((e) => e.at <= this.#now).sort((a, b) => a.at - b.at);
    this.#due = this.#due.filter((e) => e.at > this.#now);
    for (const { fn } of due) fn();
    this.#notify();
  }

  #notify(): void {
    const waiting = this.#changed;
    this.#changed = [];
    for (const resolve of waiting) resolve();
  }
}
