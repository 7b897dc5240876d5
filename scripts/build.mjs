#!/usr/bin/env node
// `npm run build` (and `prepare`, which `npm ci`, `npm install` and `npm link` run): compiles
// src/ and the console into dist.next/, then swaps it in for dist/ with two renames. A server
// already running from dist/ (or serving its console from dist/ui) never finds the folder
// missing or half written, which `rm -rf dist && tsc` did for as long as the build took.
import { execFileSync } from 'node:child_process';
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sourceHash } from './source-hash.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const next = join(root, 'dist.next');
const old = join(root, 'dist.old');
const dist = join(root, 'dist');
const require = createRequire(import.meta.url);

function run(bin, args) {
  try {
    execFileSync(process.execPath, [bin, ...args], { cwd: root, stdio: 'inherit' });
  } catch {
    // the tool printed why; dist/ is left as it was
    process.stderr.write(
      `build failed in ${bin.split('/').slice(-3).join('/')}: dist/ unchanged\n`,
    );
    process.exit(1);
  }
}

rmSync(next, { recursive: true, force: true });
// taken before compiling: an edit made during the build makes the stamp stale, never wrong
const hash = sourceHash(root);
const tsc = require.resolve('typescript/bin/tsc');
run(tsc, ['-p', 'tsconfig.build.json', '--outDir', next]);
run(tsc, ['-p', 'tsconfig.statusline.json', '--outDir', join(next, 'cjs')]);
writeFileSync(join(next, 'cjs', 'package.json'), JSON.stringify({ type: 'commonjs' }));
const vite = join(dirname(require.resolve('vite/package.json')), 'bin', 'vite.js');
run(vite, [
  'build',
  '--config',
  'ui/vite.config.ts',
  '--logLevel',
  'warn',
  '--outDir',
  join(next, 'ui'),
  '--emptyOutDir',
]);

// what dist/ is compiled from: the test suite runs it only while this matches (vitest.config.ts)
writeFileSync(join(next, 'source-hash.txt'), `${hash}\n`);

rmSync(old, { recursive: true, force: true });
if (existsSync(dist)) renameSync(dist, old);
renameSync(next, dist);
rmSync(old, { recursive: true, force: true });
