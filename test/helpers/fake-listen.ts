/** How the loopback fakes of model APIs (Anthropic, OpenAI Responses, Gemini) listen and close. */
import type { Server } from 'node:http';
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
