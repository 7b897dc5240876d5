/**
 * The one documented way to get `rotscope` on PATH (README: `npm link` in the checkout) gives a
 * command that runs from any directory, and the README uses that command, never `npx rotscope`
 * (which, in the checkout, ran the package's `prepare` rebuild under a running server and took
 * 4-6 s a call, and outside it asked the registry for an unpublished package).
 * The link goes to a temporary npm prefix: nothing outside the test's folder is written, and
 * `--ignore-scripts` skips the rebuild that `prepare` does (build-under-server.test.ts covers it).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const prefix = mkdtempSync(join(tmpdir(), 'rotscope-prefix-'));
afterAll(() => rmSync(prefix, { recursive: true, force: true }));

describe('rotscope on PATH', () => {
  it('npm link puts a working rotscope on PATH, run from any directory', () => {
    const linked = spawnSync('npm', ['link', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: ROOT,
      env: { ...process.env, npm_config_prefix: prefix },
      encoding: 'utf8',
    });
    expect(linked.status, linked.stderr).toBe(0);
    const env = { ...process.env, PATH: `${join(prefix, 'bin')}${delimiter}${process.env.PATH}` };
    const version = spawnSync('rotscope', ['--version'], { cwd: prefix, env, encoding: 'utf8' });
    expect(version.status, version.stderr).toBe(0);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(version.stdout.trim()).toBe(pkg.version);
    const status = spawnSync('rotscope', ['statusline'], {
      cwd: prefix,
      env,
      input: JSON.stringify({
        model: { id: 'claude-sonnet-4-6' },
        context_window: { current_usage: { input_tokens: 100_000 }, context_window_size: 200_000 },
      }),
      encoding: 'utf8',
    });
    expect(status.status, status.stderr).toBe(0);
    expect(status.stdout).toContain('ctx 50%');
  });

  it('the README says how, and uses rotscope, not npx rotscope', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('`npm link`');
    expect(readme).not.toContain('npx rotscope');
  });
});
