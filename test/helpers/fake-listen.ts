/**
 * How the loopback fakes of model APIs (Anthropic, OpenAI Responses, Gemini, Chat Completions)
 * take requests, listen and close.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Where a fake listens: a Unix socket (relayed into a CLI's network namespace) or a loopback port. */
export type FakeListen = { socketPath: string } | { port: 0 };

/**
 * Starts `server` on `listen`; resolves with its URL (`http://127.0.0.1:PORT`, null on a Unix
 * socket) and a close that ends open connections too.
 */
export function listenFake(
  server: Server,
  listen: FakeListen,
): Promise<{ url: string | null; close: () => Promise<void> }> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const ready = () => {
      const address = server.address();
      resolve({
        url:
          typeof address === 'object' && address !== null
            ? `http://127.0.0.1:${(address as AddressInfo).port}`
            : null,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    };
    if ('socketPath' in listen) server.listen(listen.socketPath, ready);
    else server.listen(0, '127.0.0.1', ready);
  });
}

/**
 * A server that reads each request's whole body, then answers it with `handle`; when `handle`
 * throws, `fail` answers (the API's own 500).
 */
export function bodyServer(
  handle: (req: IncomingMessage, res: ServerResponse, raw: string) => void,
  fail: (res: ServerResponse, error: unknown) => void,
): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks).toString('utf8'));
      } catch (error) {
        fail(res, error);
      }
    });
  });
}
