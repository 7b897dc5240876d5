/**
 * What the real-CLI helpers (Claude Code, the Agent SDK, Codex, Copilot CLI, Gemini CLI, OpenCode,
 * Qwen Code) share to keep a CLI's traffic on this machine: whether `unshare -n` can give it a
 * private network namespace, the Unix-socket relays that carry its connections to loopback ports
 * outside that namespace, and the run of the relay (./loopback-relay.mjs) that starts the CLI in it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';

const RELAY = fileURLToPath(new URL('./loopback-relay.mjs', import.meta.url));

let unshareWorks: boolean | undefined;
/** True when `unshare -n` can give the CLI a private network namespace here. */
export function canIsolateNetwork(): boolean {
  unshareWorks ??=
    spawnSync('unshare', ['-n', '--', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore' })
      .status === 0;
  return unshareWorks;
}

/** A Unix socket that relays each connection to a TCP address on loopback. */
export function relayToTcp(socketPath: string, target: URL): Promise<Server> {
  const server = createServer((inbound) => {
    const outbound = createConnection({ host: target.hostname, port: Number(target.port) });
    inbound.pipe(outbound).pipe(inbound);
    const end = () => {
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', end);
    outbound.on('error', end);
  });
  return new Promise((resolve) => server.listen(socketPath, () => resolve(server)));
}

/** What a relayed run of a CLI gave. */
export interface RelayedRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** True when it ran in a private network namespace. */
  isolated: boolean;
}

/**
 * Runs ./loopback-relay.mjs with `spec` (its forwards, the CLI's environment, command and folder),
 * in a private network namespace when `unshare -n` can give one, and waits for it; killed after
 * `timeoutMs`. Only `PATH` is passed on (the spec carries the CLI's environment). Its output comes
 * through pipes, or through the files `<outputFiles>.stdout` / `.stderr` for a CLI whose large
 * writes fail on a pipe that Node made non-blocking (Codex: EAGAIN, a panic).
 */
export async function runRelayed(
  spec: string,
  options: { path: string; timeoutMs: number; outputFiles?: string },
): Promise<RelayedRun> {
  const isolated = canIsolateNetwork();
  const [cmd, cmdArgs] = isolated
    ? [
        'unshare',
        [
          '-n',
          '--',
          'sh',
          '-c',
          'ip link set lo up && exec "$0" "$@"',
          process.execPath,
          RELAY,
          spec,
        ],
      ]
    : [process.execPath, [RELAY, spec]];
  const files = options.outputFiles;
  const outFd = files === undefined ? null : openSync(`${files}.stdout`, 'w');
  const errFd = files === undefined ? null : openSync(`${files}.stderr`, 'w');
  const child = spawn(cmd, cmdArgs, {
    stdio: ['ignore', outFd ?? 'pipe', errFd ?? 'pipe'],
    env: { PATH: options.path },
  });
  if (outFd !== null) closeSync(outFd);
  if (errFd !== null) closeSync(errFd);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
  const exitCode = await new Promise<number | null>((resolve) =>
    child.on('exit', (code) => resolve(code)),
  );
  clearTimeout(timer);
  if (files !== undefined) {
    stdout = readFileSync(`${files}.stdout`, 'utf8');
    stderr = readFileSync(`${files}.stderr`, 'utf8');
  }
  return { exitCode, stdout, stderr, isolated };
}

/** `over` deep-merged over `base` (objects merged key by key; anything else replaced). */
export function mergeDeep(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object'
        ? mergeDeep(b as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}
