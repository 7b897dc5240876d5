/**
 * Long synchronous work in slices that give the event loop back (issue 33): one batch of
 * 100,000 spans is decoded, normalized and written into COPY data in stretches of about
 * `SLICE_MS`, with a turn of the event loop between them, so `/healthz` and the requests of
 * other workspaces are answered meanwhile. Work that takes less than one slice never yields:
 * a small batch runs exactly as before.
 *
 * Work written once for both paths is a generator that yields at each point where it may
 * pause (after a span, a row): `runWhole` runs it straight through (the synchronous API),
 * `runSliced` pauses at the first such point after each slice is spent.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';

/** The longest stretch (ms) sliced work holds the event loop, give or take one step. */
export const SLICE_MS = 20;

/** The time slices of one piece of work. */
export class Slices {
  #began = performance.now();

  constructor(readonly ms = SLICE_MS) {}

  /** Whether the current slice is spent: the caller should `await next()` before going on. */
  spent(): boolean {
    return performance.now() - this.#began >= this.ms;
  }

  /** A turn of the event loop (after the I/O waiting for it); the next slice starts after it. */
  async next(): Promise<void> {
    await yieldToLoop();
    this.#began = performance.now();
  }
}

/** Runs stepwise work to its end without pausing. */
export function runWhole<T>(steps: Generator<unknown, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Runs stepwise work to its end, giving the event loop a turn whenever a slice is spent. */
export async function runSliced<T>(
  steps: Generator<unknown, T>,
  slices = new Slices(),
): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (slices.spent()) await slices.next();
  }
}
