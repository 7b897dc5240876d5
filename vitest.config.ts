import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { childrenFromSource } from './scripts/source-hash.mjs';

/**
 * The suite in projects, by what a test is about (docs/testing.md). `vitest run` (npm test) runs
 * them all on the database DATABASE_URL names (none: the embedded PGlite); `--project <name>`
 * runs one. CI (.ci/run) runs everything once on PGlite, then again on PostgreSQL only the
 * projects where the database matters (`integration`, `e2e`), as Jaeger runs its storage suite
 * per backend and the rest once.
 * - unit: pure code, no I/O beyond reading fixtures and repository files (test/unit);
 * - integration: a database, loopback servers, temporary files (test/integration);
 * - e2e: real `rotscope` processes where the store is what is tested: restarts, kills, several
 *   processes on one database, the CLI on the store, findings end to end (test/e2e);
 * - cli: real processes where the database is not what is tested: the build, packaging, the
 *   installers, hooks, help, analyze of a file, the library producers (test/e2e);
 * - agents: the real agent CLIs and the SDK against a real server (test/e2e/claude-code-real,
 *   codex-real, copilot-real, gemini-real, sdk);
 * - browser: the console in a real Chromium (test/browser).
 * The settings below are shared (`extends: true`); each project adds its files and, where a
 * database is used, the global setup that migrates the template test/helpers/store.ts copies.
 */
const ONCE_E2E = [
  'test/e2e/analyze-window-unknown.test.ts',
  'test/e2e/build-under-server.test.ts',
  'test/e2e/build.test.ts',
  'test/e2e/claude-code-hooks.test.ts',
  'test/e2e/claude-code-install.test.ts',
  'test/e2e/cli-help.test.ts',
  'test/e2e/codex-install.test.ts',
  'test/e2e/copilot-install.test.ts',
  'test/e2e/docker.test.ts',
  'test/e2e/gemini-install.test.ts',
  'test/e2e/guard.test.ts',
  'test/e2e/install-privacy.test.ts',
  'test/e2e/opencode-install.test.ts',
  'test/e2e/path-install.test.ts',
  'test/e2e/producers.test.ts',
  'test/e2e/qwen-install.test.ts',
  'test/e2e/readable-logs.test.ts',
  'test/e2e/statusline-percent.test.ts',
  'test/e2e/statusline-segment.test.ts',
  'test/e2e/token-file.test.ts',
];
const AGENTS = [
  'test/e2e/claude-agent-sdk-real/**/*.test.ts',
  'test/e2e/claude-code-real/**/*.test.ts',
  'test/e2e/codex-real/**/*.test.ts',
  'test/e2e/copilot-real/**/*.test.ts',
  'test/e2e/gemini-real/**/*.test.ts',
  'test/e2e/opencode-real/**/*.test.ts',
  'test/e2e/qwen-code-real/**/*.test.ts',
  'test/e2e/sdk/**/*.test.ts',
];
const withDatabase = { globalSetup: ['test/helpers/global-setup.ts'] };

/**
 * The `bin/rotscope.js` child processes the tests start (servers, hooks, installers, the CLI) run
 * the compiled dist/ when it was built from exactly this checkout (dist/source-hash.txt, written
 * by `npm run build`, which `npm ci` runs), else src/ through tsx: never a stale build, and a
 * child starts in about 0.5 s of CPU instead of 1.3 s. ROTSCOPE_FROM_SOURCE=1 forces src/.
 */
const fromSource = childrenFromSource(fileURLToPath(new URL('.', import.meta.url)));

export default defineConfig({
  test: {
    // No test reaches anything but loopback: see the guard (it also covers Node children).
    setupFiles: ['test/helpers/network-guard.mjs', 'test/helpers/user-dirs.ts'],
    // bin/rotscope.js run by tests: dist/ when built from this source, else src/ (see above)
    // and every evaluation from memory checked against the stored rows (src/loops.ts)
    env: { ROTSCOPE_FROM_SOURCE: fromSource, ROTSCOPE_VERIFY_CALL_MEMO: '1' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        // pure code: the source graph is imported once per worker, not once per file
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false },
      },
      {
        extends: true,
        // the source graph imported once per worker, not once per file (each test file still runs
        // afresh; a store is per file: test/helpers/store.ts)
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          isolate: false,
          ...withDatabase,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/*.test.ts'],
          exclude: ONCE_E2E,
          ...withDatabase,
        },
      },
      {
        extends: true,
        test: { name: 'cli', include: ONCE_E2E, ...withDatabase },
      },
      {
        extends: true,
        test: { name: 'agents', include: AGENTS, ...withDatabase },
      },
      {
        extends: true,
        // the source graph and the browser driver imported once per worker, not once per file
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          isolate: false,
          ...withDatabase,
        },
      },
    ],
  },
});
