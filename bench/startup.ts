/**
 * `npm run bench -- startup`: start-up of the compiled `rotscope` as users run it, each command
 * paired with a bare `node -e ''` in the same run (A B A B ..., ratio of the medians):
 * `--version`, `statusline` on a 1 MB and a 1 GB transcript (the ESM entry; `npm run bench --
 * statusline` also times bin/rotscope-statusline.cjs, the entry install writes), and
 * `serve` on the embedded database until `/readyz` answers 200.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchEnv, RUNS, timeProcess, versusBareNode } from './process-timing.ts';
import { transcript } from './transcript-file.ts';

const BIN = fileURLToPath(new URL('../bin/rotscope.js', import.meta.url));
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Wall time (ms) from spawning `rotscope serve` to the first 200 from `/readyz`; then stops it. */
async function timeServe(dataDir: string): Promise<{ ms: number }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--port', String(port), '--log-level', 'warn'],
    { env: benchEnv({ ROTSCOPE_DATA_DIR: dataDir, DATABASE_URL: '' }), stdio: 'ignore' },
  );
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`rotscope serve exited ${child.exitCode}`);
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) return { ms: performance.now() - started };
      if (performance.now() - started > 60_000) throw new Error('serve not ready in 60 s');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

export async function benchStartup() {
  const dir = mkdtempSync(path.join(tmpdir(), 'rotscope-bench-startup-'));
  try {
    const result: Record<string, unknown> = { runs: RUNS };
    result.version = await versusBareNode(() => timeProcess([BIN, '--version']));
    for (const [name, bytes] of [
      ['statusline_1mb', 1024 * 1024],
      ['statusline_1gb', 1024 * 1024 * 1024],
    ] as const) {
      const file = path.join(dir, `${name}.jsonl`);
      await transcript(file, bytes);
      const status = JSON.stringify({ model: { id: 'claude-sonnet-4-5' }, transcript_path: file });
      result[name] = await versusBareNode(async () => {
        const run = await timeProcess([BIN, 'statusline'], status);
        // 151,003 of Claude Sonnet's 200k: a wrong reading means the bench measured nothing.
        if (!run.stdout.includes('ctx 75% 151k/200k'))
          throw new Error(`wrong status line: ${JSON.stringify(run.stdout)}`);
        return run;
      });
      rmSync(file, { force: true });
    }
    const dataDir = path.join(dir, 'data');
    result.serve_until_readyz = await versusBareNode(() => timeServe(dataDir));
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
