/**
 * The compiled build as `npm ci` makes it (tsconfig.build.json), in a copy of the repository's
 * layout of its own (the shared dist/ is left alone): `rotscope --version`, `statusline` loading
 * none of the server's dependencies, `serve` reaching /readyz and decoding OTLP (migrations and
 * protos found from dist/), and a clear message when dist/ is missing and tsx is not installed.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distIsFresh } from '../../scripts/source-hash.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let copy: string;
let bin: string;

/** The compiled CLI's environment: never source mode, whatever vitest sets. */
const compiledEnv = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? '',
  ...extra,
});

/** What `npm run build` compiles (not the console): tsconfig.build.json, then the CommonJS status line. */
function compileInto(dist: string) {
  execFileSync(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      path.join(ROOT, 'tsconfig.build.json'),
      '--outDir',
      dist,
    ],
    { stdio: 'pipe' },
  );
  // The status line's CommonJS build, as `npm run build` makes it.
  execFileSync(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      path.join(ROOT, 'tsconfig.statusline.json'),
      '--outDir',
      path.join(dist, 'cjs'),
    ],
    { stdio: 'pipe' },
  );
}

beforeAll(() => {
  copy = mkdtempSync(path.join(tmpdir(), 'rotscope-build-'));
  // dist/ as `npm ci` built it from this very source (its source-hash.txt matches) is the same
  // compiler output: copied instead of compiled again (the console's bundle is not needed here).
  // A copy that fails (build-under-server swapping dist/ meanwhile) compiles after all.
  let copied = false;
  if (distIsFresh(ROOT)) {
    try {
      cpSync(path.join(ROOT, 'dist'), path.join(copy, 'dist'), {
        recursive: true,
        filter: (from) => !from.startsWith(path.join(ROOT, 'dist', 'ui')),
      });
      copied = true;
    } catch {
      rmSync(path.join(copy, 'dist'), { recursive: true, force: true });
    }
  }
  if (!copied) compileInto(path.join(copy, 'dist'));
  writeFileSync(path.join(copy, 'dist/cjs/package.json'), JSON.stringify({ type: 'commonjs' }));
  mkdirSync(path.join(copy, 'bin'));
  for (const file of ['rotscope.js', 'rotscope-statusline.cjs'])
    copyFileSync(path.join(ROOT, 'bin', file), path.join(copy, 'bin', file));
  copyFileSync(path.join(ROOT, 'package.json'), path.join(copy, 'package.json'));
  for (const dir of ['node_modules', 'migrations', 'proto'])
    symlinkSync(path.join(ROOT, dir), path.join(copy, dir));
  bin = path.join(copy, 'bin/rotscope.js');
}, 300_000);
afterAll(() => rmSync(copy, { recursive: true, force: true }));

/**
 * Runs the compiled CLI with a module-load recorder; returns its output, every file loaded (ES
 * modules through a load hook, CommonJS from require.cache at exit) and Node's built-in modules.
 */
function runRecorded(args: string[], input: string) {
  const log = path.join(copy, `loaded-${process.hrtime.bigint()}.txt`);
  const builtins = `${log}.builtins`;
  const cjsRecorder = path.join(copy, `record-cjs-${process.hrtime.bigint()}.cjs`);
  writeFileSync(
    cjsRecorder,
    `const fs = require('node:fs');
process.on('exit', () => {
  for (const file of Object.keys(require.cache)) if (file !== __filename) fs.appendFileSync(${JSON.stringify(log)}, require('node:url').pathToFileURL(file).href + '\\n');
  fs.writeFileSync(${JSON.stringify(builtins)}, process.moduleLoadList.join('\\n'));
});\n`,
  );
  const hooks = path.join(copy, 'record-hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  if (url.startsWith('file:')) appendFileSync(${JSON.stringify(log)}, url + '\\n');
  return next(url, context);
}\n`,
  );
  const register = `data:text/javascript,import{register}from'node:module';register(${JSON.stringify(pathToFileURL(hooks).href)})`;
  // A CommonJS entry is recorded through require.cache only: the ESM hooks' worker would load the
  // very stream modules the check below wants absent.
  const cjsEntry = args[0]?.endsWith('.cjs') === true || args[0] === '-e';
  const node = cjsEntry ? ['-r', cjsRecorder] : ['-r', cjsRecorder, '--import', register, bin];
  const result = spawnSync(process.execPath, [...node, ...args], {
    input,
    env: compiledEnv(),
    encoding: 'utf8',
  });
  const loaded = readFileSync(log, { encoding: 'utf8', flag: 'a+' })
    .trim()
    .split('\n')
    .filter((url) => url !== '')
    .map((url) => fileURLToPath(url))
    .filter((file) => !file.startsWith(path.join(ROOT, 'test'))) // the harness's own preloads
    .map((file) => path.relative(copy, file)); // dependencies show as ../…/node_modules/…
  return {
    ...result,
    loaded: [...new Set(loaded)],
    builtins: readFileSync(builtins, 'utf8').split('\n'),
  };
}

describe('the compiled build', () => {
  it('prints the version of package.json', () => {
    const result = spawnSync(process.execPath, [bin, '--version'], {
      env: compiledEnv(),
      encoding: 'utf8',
    });
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(
      `${JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version}\n`,
    );
  });

  it('runs statusline and --version from dist/ without loading any dependency', () => {
    const transcript = path.join(copy, 'transcript.jsonl');
    writeFileSync(
      transcript,
      JSON.stringify({
        type: 'assistant',
        message: {
          model: 'claude-sonnet-4-5',
          usage: { input_tokens: 3, cache_read_input_tokens: 150_000 },
        },
      }) + '\n',
    );
    const status = JSON.stringify({
      model: { id: 'claude-sonnet-4-5' },
      transcript_path: transcript,
    });
    const statusline = runRecorded(['statusline'], status);
    expect(statusline.stderr).toBe('');
    expect(statusline.stdout).toContain('ctx 75% 150k/200k');
    // its own files only: the status line and the dependency-free usage rules it shares
    expect(statusline.loaded.sort()).toEqual([
      'bin/rotscope.js',
      'dist/cjs/cli/statusline.js',
      'dist/cjs/model/usage-rules.js',
    ]);
    // The entry install writes: CommonJS only, and no stream module (stdin and stdout through fs).
    const cjs = runRecorded([path.join(copy, 'bin/rotscope-statusline.cjs')], status);
    expect(cjs.stderr).toBe('');
    expect(cjs.stdout).toContain('ctx 75% 150k/200k');
    expect(cjs.loaded.sort()).toEqual([
      'bin/rotscope-statusline.cjs',
      'dist/cjs/cli/statusline.js',
      'dist/cjs/model/usage-rules.js',
    ]);
    // (compared with a bare node under the same harness, whose network guard may preload some)
    const bare = runRecorded(['-e', ''], '');
    const streams = (builtins: string[]) =>
      builtins.filter((m) => /^NativeModule (stream|net|tty|internal\/streams\/.*)$/.test(m));
    expect(streams(cjs.builtins)).toEqual(streams(bare.builtins));
    const version = runRecorded(['--version'], '');
    expect(version.status).toBe(0);
    expect(version.loaded.sort()).toEqual(['bin/rotscope.js', 'dist/entry.js']);
  });

  it('serves from dist/: migrations applied, /readyz 200, an OTLP body decoded', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    const dataDir = path.join(copy, 'data');
    const child = spawn(process.execPath, [bin, 'serve', '--port', String(port)], {
      env: compiledEnv({ ROTSCOPE_DATA_DIR: dataDir, ROTSCOPE_LOG_LEVEL: 'warn' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      const deadline = Date.now() + 90_000;
      for (;;) {
        expect(child.exitCode, output).toBeNull();
        const status = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.status,
          () => 0,
        );
        if (status === 200) break;
        if (Date.now() > deadline) throw new Error(`/readyz not 200 in 90 s:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // An empty ExportTraceServiceRequest: decoded with the .proto files found from dist/.
      const ingest = await fetch(`http://127.0.0.1:${port}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf' },
        body: new Uint8Array(0),
      });
      expect(ingest.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  }, 120_000);

  it('says how to build when dist/ is missing and tsx is not installed', () => {
    const bare = mkdtempSync(path.join(tmpdir(), 'rotscope-nobuild-'));
    try {
      mkdirSync(path.join(bare, 'bin'));
      copyFileSync(bin, path.join(bare, 'bin/rotscope.js'));
      writeFileSync(path.join(bare, 'package.json'), '{"type":"module"}');
      const result = spawnSync(
        process.execPath,
        [path.join(bare, 'bin/rotscope.js'), '--version'],
        {
          env: compiledEnv(),
          encoding: 'utf8',
        },
      );
      expect(result.status).toBe(1);
      expect(result.stderr).toBe(
        'rotscope: dist/ is missing: run "npm run build" (npm ci does it)\n',
      );
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });
});
