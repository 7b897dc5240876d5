import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // No test reaches anything but loopback: see the guard (it also covers Node children).
    setupFiles: ['test/helpers/network-guard.mjs'],
    // bin/rotscope.js run by tests executes src/ through tsx, not a possibly stale dist/.
    env: { ROTSCOPE_FROM_SOURCE: '1' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
});
