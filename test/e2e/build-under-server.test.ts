/**
 * `npm run build` (what `prepare` runs on `npm ci`, `npm install` and `npm link`) beside a
 * running server that uses dist/: the console and the API keep answering all through the build,
 *. The build once began with `rm -rf dist`, so the
 * console of a running server answered 404 (and lazily loaded commands failed) until tsc and
 * vite were done.
 *
 * PGlite only: it rebuilds the checkout's dist/ (about 40 s of CPU), once per CI run.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../helpers/child-server.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'rotscope-build-'));
let server: ChildServer | undefined;

afterAll(async () => {
  server?.process.kill('SIGTERM');
  await server?.exited;
  rmSync(tmp, { recursive: true, force: true });
});

function build(env: Record<string, string> = {}): Promise<number | null> {
  const child = spawn(process.execPath, [join(ROOT, 'scripts/build.mjs')], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

describe.skipIf(!!process.env.DATABASE_URL)('npm run build beside a running server', () => {
  it('the console and the API answer all through the build', async () => {
    if (!existsSync(join(ROOT, 'dist/entry.js'))) expect(await build()).toBe(0);
    server = await startChildServer({
      ROTSCOPE_FROM_SOURCE: '0',
      ROTSCOPE_DATA_DIR: join(tmp, 'data'),
    });
    let done = false;
    const building = build().then((code) => {
      done = true;
      return code;
    });
    const answers: string[] = [];
    while (!done) {
      for (const path of ['/', '/healthz', '/api/conversations']) {
        const res = await fetch(`${server.url}${path}`);
        answers.push(`${path} ${res.status}`);
        await res.arrayBuffer();
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await building).toBe(0);
    expect(answers.length).toBeGreaterThan(30);
    expect(answers.filter((a) => !a.endsWith(' 200'))).toEqual([]);
    expect(existsSync(join(ROOT, 'dist.next'))).toBe(false);
    expect(existsSync(join(ROOT, 'dist.old'))).toBe(false);
  }, 240_000);
});
