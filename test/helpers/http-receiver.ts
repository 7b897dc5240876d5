/**
 * A real HTTP server on loopback that records what it receives and answers as a test
 * scripts it: a status, headers and body per request, or no answer at all (hang).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Date.now() when the request was complete. */
  at: number;
}

export type Reply = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface HttpReceiver {
  /** Base URL, e.g. http://127.0.0.1:PORT */
  url: string;
  requests: ReceivedRequest[];
  /** Waits until at least `count` requests arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/**
 * Starts a receiver. `reply` decides each answer from the request and its 0-based index
 * (default: 200 "ok").
 */
export async function startHttpReceiver(
  reply: (request: ReceivedRequest, index: number) => Reply = () => ({ status: 200, body: 'ok' }),
): Promise<HttpReceiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      const index = requests.push(received) - 1;
      for (const wake of waiters.splice(0)) wake();
      const answer = reply(received, index);
      if (answer === 'hang') return;
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${count} requests, got ${requests.length}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return requests;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
