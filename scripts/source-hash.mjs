// The hash of what dist/ is compiled from (src/ and the compiler settings): scripts/build.mjs
// writes it to dist/source-hash.txt, and the test suite (vitest.config.ts) runs its rotscope
// child processes from dist/ only while that file matches the checkout (else through tsx from
// src/, so a test never runs a stale build). Hashing the ~300 files takes a few milliseconds.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.statusline.json'];

/** Every file under `path` (or `path` itself), sorted. */
function filesUnder(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** sha256 over each input file's path and content, in a fixed order. */
export function sourceHash(root) {
  const hash = createHash('sha256');
  for (const input of INPUTS)
    for (const file of filesUnder(join(root, input))) {
      hash.update(relative(root, file));
      hash.update('\0');
      hash.update(readFileSync(file));
      hash.update('\0');
    }
  return hash.digest('hex');
}

/** True when `<root>/dist` was built from exactly this checkout's source. */
export function distIsFresh(root) {
  const stamp = join(root, 'dist', 'source-hash.txt');
  return existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === sourceHash(root);
}

/**
 * What the test suite's `bin/rotscope.js` children run: '1' (src/ through tsx) unless dist/ was
 * built from exactly this checkout, '0' (the compiled dist/) when it was; ROTSCOPE_FROM_SOURCE
 * set in the environment wins.
 */
export function childrenFromSource(root) {
  return process.env.ROTSCOPE_FROM_SOURCE ?? (distIsFresh(root) ? '0' : '1');
}
