/**
 * The @rotscope/sdk package as npm would publish it: `npm pack --dry-run --json` in
 * packages/sdk (which runs its `prepare` build) lists ESM JavaScript with type declarations, the
 * README and package.json, and no sources or test files; the built package imports by its name
 * in a plain Node process; its only dependency is the `@opentelemetry/api` peer.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const SDK_DIR = fileURLToPath(new URL('../../../packages/sdk/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface PackedFile {
  path: string;
}
let files: string[];
let manifest: {
  type: string;
  exports: { '.': { types: string; import: string } };
  dependencies?: Record<string, string>;
  peerDependencies: Record<string, string>;
};

beforeAll(async () => {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json'], {
    cwd: SDK_DIR,
    maxBuffer: 10_000_000,
  });
  const [pack] = JSON.parse(stdout) as Array<{ name: string; files: PackedFile[] }>;
  expect(pack!.name).toBe('@rotscope/sdk');
  files = pack!.files.map((f) => f.path).sort();
  manifest = JSON.parse(readFileSync(`${SDK_DIR}package.json`, 'utf8')) as typeof manifest;
}, 120_000);

describe('@rotscope/sdk package contents', () => {
  it('ships ESM JavaScript with a declaration next to each module, the README and package.json', () => {
    expect(files).toContain('package.json');
    expect(files).toContain('README.md');
    const js = files.filter((f) => f.endsWith('.js'));
    expect(js).toContain('dist/index.js');
    for (const f of js) expect(files).toContain(f.replace(/\.js$/, '.d.ts'));
    expect(manifest.type).toBe('module');
    expect(files).toContain(manifest.exports['.'].import.replace(/^\.\//, ''));
    expect(files).toContain(manifest.exports['.'].types.replace(/^\.\//, ''));
  });

  it('ships no sources, tests, source maps or config', () => {
    const unexpected = files.filter(
      (f) =>
        !['package.json', 'README.md'].includes(f) &&
        !(f.startsWith('dist/') && (f.endsWith('.js') || f.endsWith('.d.ts'))),
    );
    expect(unexpected).toEqual([]);
    expect(files.filter((f) => /test|spec|fixture/i.test(f))).toEqual([]);
  });

  it('depends on nothing but the @opentelemetry/api peer', () => {
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(Object.keys(manifest.peerDependencies)).toEqual(['@opentelemetry/api']);
  });

  it('the built package imports by name in plain Node and checks its arguments', async () => {
    const script = `
      const sdk = await import('@rotscope/sdk');
      let error = null;
      try { sdk.markCompaction({ kind: 'squash' }); } catch (e) { error = e.constructor.name + ': ' + e.message; }
      console.log(JSON.stringify({ exports: Object.keys(sdk).sort(), error }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
    });
    const out = JSON.parse(stdout) as { exports: string[]; error: string };
    expect(out.exports).toEqual(
      expect.arrayContaining(['RotscopeSpanProcessor', 'configure', 'markCompaction']),
    );
    expect(out.error).toBe(
      'TypeError: @rotscope/sdk markCompaction: unknown kind "squash"; expected one of summarize, clear_tool_results, truncate, other',
    );
  });

  it('the README has a quick start of at most 10 lines', () => {
    const readme = readFileSync(`${SDK_DIR}README.md`, 'utf8');
    const quickStart = /## Quick start\s+```ts\n([\s\S]*?)```/.exec(readme);
    expect(quickStart).not.toBeNull();
    const lines = quickStart![1]!.split('\n').filter((l) => l.trim() !== '');
    expect(lines.length).toBeGreaterThan(3);
    expect(lines.length).toBeLessThanOrEqual(10);
  });
});
