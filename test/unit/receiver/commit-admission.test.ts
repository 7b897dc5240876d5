/** CommitAdmission (src/receiver/commit-admission.ts) on a fake clock: Little's law, measured. */
import { describe, expect, it } from 'vitest';
import { CommitAdmission } from '../../../src/receiver/commit-admission.ts';

function setup(maxWaitMs: number) {
  let now = 0;
  const admission = new CommitAdmission(maxWaitMs, () => now);
  /** Starts a commit that ends when its `end()` is called. */
  const start = () => {
    let end!: () => void;
    const done = admission.run(() => new Promise<void>((resolve) => (end = resolve)));
    return {
      end: async () => {
        end();
        await done;
      },
    };
  };
  return { admission, start, advance: (ms: number) => (now += ms) };
}

describe('CommitAdmission', () => {
  it('admits everything until a commit rate is measured, and always one batch when idle', async () => {
    const { admission, start, advance } = setup(1_000);
    const commits = Array.from({ length: 10 }, start);
    expect(admission.admits()).toBe(true); // nothing measured yet
    advance(1_000);
    await commits[0]!.end(); // first sample: 1 commit in 1 s of busy time
    expect(admission.rate).toBe(1);
    expect(admission.inCommit).toBe(9);
    expect(admission.admits()).toBe(false); // 10 ahead at 1/s: 10 s
    for (const commit of commits.slice(1)) await commit.end();
    expect(admission.inCommit).toBe(0);
    expect(admission.admits()).toBe(true);
  });

  it('admits while the batches ahead can be committed within the limit', async () => {
    const { admission, start, advance } = setup(2_000);
    // 4 commits a second of busy time, round after round: the smoothed rate converges on 4.
    for (let round = 0; round < 8; round++) {
      const commits = Array.from({ length: 4 }, start);
      advance(1_000);
      for (const commit of commits) await commit.end();
    }
    expect(admission.rate).toBeGreaterThan(3.95);
    expect(admission.rate).toBeLessThanOrEqual(4);
    const held = Array.from({ length: 6 }, start); // (6 + 1) / 4 = 1.75 s
    expect(admission.expectedWaitMs()).toBeCloseTo(1_750, -2);
    expect(admission.admits()).toBe(true);
    held.push(start(), start()); // (8 + 1) / 4 = 2.25 s
    expect(admission.admits()).toBe(false);
    for (const commit of held) await commit.end();
  });

  it('admits everything when turned off', () => {
    const { admission, start } = setup(0);
    for (let i = 0; i < 100; i++) start();
    expect(admission.admits()).toBe(true);
  });
});
