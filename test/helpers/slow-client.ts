/**
 * Slow OTLP clients on real loopback sockets (node:net): a request head, then its body one
 * byte a second, the way a slow-loris or a noisy neighbour holds an ingest slot.
 */
import net from 'node:net';

export interface SlowClient {
  socket: net.Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Resolves with the ms from connecting to the server closing the connection. */
  closed: Promise<number>;
}

/** The head of a POST to /v1/traces announcing `length` JSON body bytes. */
export function requestHead(length: number, token?: string): string {
  return (
    'POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
    (token ? `Authorization: Bearer ${token}\r\n` : '') +
    `Content-Length: ${length}\r\n\r\n`
  );
}

/**
 * Connects to `url`, sends the head of a `length`-byte body and then one byte of it every
 * `everyMs` (default a second) until the server closes the connection.
 */
export async function slowClient(
  url: string,
  options: { token?: string; length?: number; everyMs?: number } = {},
): Promise<SlowClient> {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString()));
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const started = Date.now();
  const closed = new Promise<number>((resolve) =>
    socket.once('close', () => resolve(Date.now() - started)),
  );
  socket.write(requestHead(options.length ?? 1_200, options.token));
  const timer = setInterval(() => {
    if (!socket.destroyed) socket.write('{');
  }, options.everyMs ?? 1_000);
  socket.once('close', () => clearInterval(timer));
  return { socket, received: () => received, closed };
}

/**
 * `count` slow clients that reopen as soon as the server closes one, until `stop()`: the
 * issue's attacker, who repeats the hold whenever it is cut.
 */
export function slowClients(
  url: string,
  count: number,
  options: { token?: string } = {},
): { stop(): void; opened(): number; answers(): string[] } {
  let stopped = false;
  let opened = 0;
  const answers: string[] = [];
  const clients = new Set<SlowClient>();
  const open = async (): Promise<void> => {
    if (stopped) return;
    opened++;
    const client = await slowClient(url, options);
    if (stopped) return void client.socket.destroy();
    clients.add(client);
    await client.closed;
    clients.delete(client);
    answers.push(client.received().split('\r\n')[0] ?? '');
    void open();
  };
  for (let i = 0; i < count; i++) void open();
  return {
    stop() {
      stopped = true;
      for (const client of clients) client.socket.destroy();
    },
    opened: () => opened,
    answers: () => answers,
  };
}
