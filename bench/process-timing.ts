/**
 * Timing whole processes against a bare `node -e ''` run by run (the honest way to measure
 * start-up on a noisy machine): the startup, status line and guard benches use it.
 */
import { spawn } from 'node:child_process';

export const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 9);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The compiled CLI, whatever the caller's environment says (no tsx, no source mode). */
export const benchEnv = (extra: Record<string, string> = {}) => {
  const env: Record<string, string | undefined> = { ...process.env, ...extra };
  delete env.ROTSCOPE_FROM_SOURCE;
  return env;
};

/** Wall time (ms) of one process from spawn to exit; rejects on a non-zero exit. */
export function timeProcess(args: string[], input = ''): Promise<{ ms: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { env: benchEnv() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - started;
      if (code === 0) resolve({ ms, stdout });
      else reject(new Error(`${args.join(' ')} exited ${code}: ${stderr}`));
    });
    child.stdin.end(input);
  });
}

/** RUNS pairs (after one unmeasured warm-up pair) of `command` and a bare `node -e ''`. */
export async function versusBareNode(command: () => Promise<{ ms: number }>) {
  const bare = () => timeProcess(['-e', '']);
  await command();
  await bare();
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    a.push((await command()).ms);
    b.push((await bare()).ms);
  }
  return {
    ms: Math.round(median(a)),
    bare_node_ms: Math.round(median(b)),
    ratio: Number((median(a) / median(b)).toFixed(2)),
  };
}
