/**
 * `rotscope serve` children (test/helpers/child-server.ts) start on a copy of a migrated
 * embedded data directory (made once by the
 * global setup, test/helpers/global-setup.ts) instead of running initdb and every migration
 * themselves: about 2 s to listen instead of 6 on this machine. (CLI commands run by
 * test/helpers/cli.ts are not seeded: `migrate` on a fresh directory is what some of them test.) Only a directory that does not
 * exist yet or is empty is seeded, so a test that prepares its own keeps it; a test of the
 * first start itself sets ROTSCOPE_TEST_FRESH_DATA_DIR=1. A copy that fails (a path that cannot
 * be written) is left to the process under test to report.
 */
import { cpSync, existsSync, readdirSync } from 'node:fs';
import { provided } from './store.ts';

export function seedDataDir(env: Record<string, string | undefined>): void {
  const dir = env.ROTSCOPE_DATA_DIR;
  if (!dir || env.DATABASE_URL || env.ROTSCOPE_TEST_FRESH_DATA_DIR === '1') return;
  const template = provided('pgliteDataDir');
  if (!template) return;
  try {
    if (existsSync(dir) && readdirSync(dir).length > 0) return;
    cpSync(template, dir, { recursive: true });
  } catch {
    // not a directory we can write: the process under test says so itself
  }
}
