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
