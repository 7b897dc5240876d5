/**
 * `rotscope serve` as a child process for benchmarks: the load generator and the server do not
 * share a process. BENCH_CPU_PROF=DIR runs it under `node --cpu-prof` (a .cpuprofile per process).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/rotscope.js', import.meta.url));

export interface ServerProcess {
  url: string;
  process: ChildProcess;
  /** The last of what it printed. */
  output(): string;
  /** SIGTERM, then waits for the exit (the profile is written on exit). */
  stop(): Promise<void>;
}

export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const profile = process.env.BENCH_CPU_PROF;
  const args = [
    ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []),
    BIN,
    'serve',
    '--port',
    '0',
    '--log-level',
    'info',
  ];
  const child = spawn(process.execPath, args, {
    env: {
      ...process.env,
      DATABASE_URL: '',
      ROTSCOPE_FROM_SOURCE: process.env.BENCH_FROM_DIST === '1' ? '' : '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.length > 100_000) output = output.slice(-50_000);
      const match = /rotscope listening on (http:\/\/[\d.:]+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then(() => reject(new Error(`rotscope exited before listening:\n${output}`)));
  });
  return {
    url,
    process: child,
    output: () => output,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
