/**
 * The composition root for `rotscope serve`: opens the store, migrates, builds the app,
 * starts the evaluator and notifier loops, listens, and shuts down in order on SIGTERM/SIGINT
 * (stop accepting, finish in-flight requests, drain the loops, close the pool).
 */
import pino from 'pino';
import { buildApp } from './api/app.ts';
import { isLoopbackHost } from './api/auth.ts';
import { createMetrics } from './api/metrics.ts';
import type { Config } from './config.ts';
import { openStore } from './store/db.ts';
import { migrate } from './store/migrate.ts';
import { anyTokenExists } from './store/workspaces.ts';
import { startBackgroundLoops } from './loops.ts';

export interface RunningServer {
  url: string;
  stop(): Promise<void>;
}

/** Starts the whole service; resolves once it listens. */
export async function serve(config: Config): Promise<RunningServer> {
  const log = pino({ level: config.logLevel, base: { service: 'rotscope' } });
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const migrated = await migrate(store.db);
    if (migrated.applied.length > 0) log.info({ applied: migrated.applied }, 'migrations applied');
    if (!isLoopbackHost(config.host) && !(await anyTokenExists(store.db))) {
      throw new Error(
        `refusing to listen on ${config.host} without tokens: create one with "rotscope token create --workspace default --scope admin", or bind to 127.0.0.1`,
      );
    }
  } catch (error) {
    await store.close();
    throw error;
  }
  const built = await buildApp({
    store,
    config,
    metrics: createMetrics({ defaultMetrics: true }),
    logger: log,
  });
  const loops = await startBackgroundLoops({ store, config, log });
  const address = await built.app.listen({ host: config.host, port: config.port });
  log.info({ address, database: store.kind, location: store.location }, 'rotscope listening');

  let stopping: Promise<void> | undefined;
  return {
    url: address,
    stop() {
      stopping ??= (async () => {
        built.beginShutdown();
        await built.app.close();
        await loops.stop();
        await store.close();
        log.info('rotscope stopped');
      })();
      return stopping;
    },
  };
}
