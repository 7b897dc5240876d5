/** Runs the real `rotscope` command (bin/rotscope.js) in a child process, as a user does. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/rotscope.js', import.meta.url));

export interface CliResult {
  /** The exit code, or the signal name when it was killed. */
  code: number | string;
  stdout: string;
  stderr: string;
}

/**
 * `node bin/rotscope.js ...args` with `stdin` piped in (closed at once when absent, like
 * `< /dev/null`) and `env` on top of this process's environment (DATABASE_URL unset unless
 * given). Killed after `timeoutMs`.
 */
export function runCli(
  args: readonly string[],
  options: {
    stdin?: string | Buffer;
    env?: Record<string, string | undefined>;
    timeoutMs?: number;
    /** Another of the project's commands instead, e.g. bin/rotscope-guard.cjs. */
    bin?: string;
    /** The working directory (default this process's): a user's folder other than the checkout. */
    cwd?: string;
  } = {},
): Promise<CliResult> {
  const child = spawn(process.execPath, [options.bin ?? BIN, ...args], {
    env: {
      ...process.env,
      DATABASE_URL: '',
      ROTSCOPE_FROM_SOURCE: process.env.ROTSCOPE_FROM_SOURCE ?? '1',
      ...options.env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.on('error', () => {}); // a command that exits without reading its stdin
  child.stdin.end(options.stdin);
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 90_000);
  return new Promise((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal ?? -1, stdout, stderr });
    }),
  );
}
