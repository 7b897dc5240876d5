/** Runs `rotscope serve` as a real child process (bin/rotscope.js), for kill and signal tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { seedDataDir } from './data-dir.ts';

const BIN = fileURLToPath(new URL('../../bin/rotscope.js', import.meta.url));

export interface ChildServer {
  url: string;
  process: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or signal name) once the process has exited. */
  exited: Promise<number | string>;
}

export async function startChildServer(
  env: Record<string, string | undefined>,
  options: { cwd?: string } = {},
): Promise<ChildServer> {
  seedDataDir(env);
  // At info: the one "rotscope listening on URL" line is an info line.
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--log-level', 'info'], {
    env: { ...process.env, DATABASE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  let output = '';
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /rotscope listening on (http:\/\/[\d.:]+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) =>
      reject(new Error(`rotscope exited (${code}) before listening:\n${output}`)),
    );
    setTimeout(
      () => reject(new Error(`rotscope did not start in 90 s:\n${output}`)),
      90_000,
    ).unref();
  });
  return { url, process: child, output: () => output, exited };
}
