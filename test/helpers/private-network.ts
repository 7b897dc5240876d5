/**
 * What the real-CLI helpers (Claude Code, Codex, Gemini CLI) share to keep a CLI's traffic on
 * this machine: whether `unshare -n` can give it a private network namespace, and the Unix-socket
 * relays that carry its connections to loopback ports outside that namespace.
 */
import { spawnSync } from 'node:child_process';
import { createConnection, createServer, type Server } from 'node:net';

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
