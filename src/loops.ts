/** Starts the background loops a `serve` process runs beside the HTTP server. */
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Store } from './store/db.ts';

export interface Loop {
  stop(): Promise<void>;
}

export async function startBackgroundLoops(_deps: { store: Store; config: Config; log: Logger }): Promise<Loop> {
  const loops: Loop[] = [];
  return {
    async stop() {
      await Promise.all(loops.map((loop) => loop.stop()));
    },
  };
}
