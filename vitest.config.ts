import { defineConfig } from 'vitest/config';

/**
 * Three projects, one per folder kind; `vitest run` (npm test) runs all three, `--project <name>`
 * (npm run test:unit, test:integration, test:e2e) one:
 * - unit: pure code, no I/O beyond reading fixtures and repository files (test/unit);
 * - integration: a database, loopback servers, temporary files (test/integration);
 * - e2e: real processes (rotscope children, the compiled build, the Docker entry point, npm
 *   pack), Chromium and the real agent CLIs (test/e2e, test/browser).
 * The settings below are shared (`extends: true`); each project adds its files and, where a
 * database is used, the global setup that migrates the template test/helpers/store.ts copies.
 */
export default defineConfig({
  test: {
    // No test reaches anything but loopback: see the guard (it also covers Node children).
    setupFiles: ['test/helpers/network-guard.mjs'],
    // bin/rotscope.js run by tests executes src/ through tsx, not a possibly stale dist/.
    env: { ROTSCOPE_FROM_SOURCE: '1' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'] },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/helpers/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts', 'test/browser/**/*.test.ts'],
          globalSetup: ['test/helpers/global-setup.ts'],
        },
      },
    ],
  },
});
