/**
 * The composition root for `rotscope serve`: opens the store, migrates, builds the app,
 * starts the evaluator and notifier loops, listens, and shuts down in order on SIGTERM/SIGINT
 * (stop accepting, finish in-flight requests, drain the loops, close the pool).
 */
import { CallMemo } from './store/call-memo.ts';
import pino from 'pino';
import { buildApp } from './api/app.ts';
import { countFindingEvents, createMetrics } from './api/metrics.ts';
import { BOOTSTRAP_SCOPE, BOOTSTRAP_WORKSPACE, bootstrapToken } from './bootstrap-token.ts';
import type { Config } from './config.ts';
import { prettyStream, wantsPrettyLogs } from './log/pretty.ts';
import { openStore } from './store/db.ts';
import { migrate } from './store/migrate.ts';
import { startBackgroundLoops } from './loops.ts';
import { sealChannelSecretsOnStart } from './notifier/seal-secrets.ts';
import { assertPortFree, explainStartupFailure } from './startup.ts';

export interface RunningServer {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts the whole service; resolves once it listens. Any start-up failure rejects with a
 * StartupError (cause and fix in one line) after releasing what it took: the port is checked
 * before the store is opened, and a later failure stops the loops and closes the store (and
 * with it the data directory's lock).
 */
export async function serve(config: Config): Promise<RunningServer> {
  const options = { level: config.logLevel, base: { service: 'rotscope' } };
  // JSON for pipes and collectors; a readable line when a person watches the terminal
  const log = wantsPrettyLogs(config.logFormat, process.stdout.isTTY === true)
    ? pino(options, prettyStream(process.stdout))
    : pino(options);
  await assertPortFree(config);
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }).catch(
    (error: unknown) => {
      throw explainStartupFailure(error, config);
    },
  );
  try {
    const migrated = await migrate(store.db);
    if (migrated.applied.length > 0) log.info({ applied: migrated.applied }, 'migrations applied');
    await sealChannelSecretsOnStart(store, config, log); // plaintext rows of older versions
    const first = await bootstrapToken(store.db, {
      host: config.host,
      given: config.bootstrapToken,
    });
    const about = { workspace: BOOTSTRAP_WORKSPACE, scope: BOOTSTRAP_SCOPE };
    if (first.kind === 'stored')
      log.info(about, 'ROTSCOPE_BOOTSTRAP_TOKEN stored as the first token');
    if (first.kind === 'none' && first.ignoredGiven)
      log.info('ROTSCOPE_BOOTSTRAP_TOKEN ignored: tokens exist already');
    if (first.kind === 'generated') {
      // Printed once, on purpose: the only way into a fresh non-loopback server.
      log.warn(
        about,
        `no API token existed and ${config.host} is not loopback: created an admin token for workspace "default" (shown once, store it now): ${first.token}`,
      );
    }
  } catch (error) {
    await store.close().catch(() => {});
    throw explainStartupFailure(error, config);
  }
  const metrics = createMetrics({ defaultMetrics: true });
  // what ingest stores, this process's evaluator judges from memory (src/store/call-memo.ts)
  const callMemo = config.evaluator ? new CallMemo() : undefined;
  const built = await buildApp({
    store,
    config,
    metrics,
    logger: log,
    callMemo,
  });
  // A rejection nobody handled is a bug, never a reason to stop ingest (Node's default exits):
  // logged with its stack and counted, and the process keeps serving.
  const onUnhandledRejection = (reason: unknown) => {
    metrics.unhandledRejections.inc();
    log.error({ err: reason }, 'unhandled rejection (a bug: please report it); still serving');
  };
  process.on('unhandledRejection', onUnhandledRejection);
  const loops = await startBackgroundLoops({
    store,
    config,
    log,
    callMemo,
    onEvaluated: (result) => {
      countFindingEvents(metrics, result.findingEvents);
      if (result.callsFrom) metrics.evaluations.inc({ calls: result.callsFrom });
    },
    onEvaluatorBatch: () => metrics.evaluatorBatches.inc(),
  });
  // fastify logs "Server listening at" for every address at info; rotscope logs one line.
  const level = built.app.log.level;
  if (log.isLevelEnabled('info')) built.app.log.level = 'warn';
  let address: string;
  try {
    address = await built.app
      .listen({ host: config.host, port: config.port })
      .finally(() => (built.app.log.level = level));
  } catch (error) {
    // taken since the port check (a race), or refused: release everything and say why
    await built.shutdown().catch(() => {});
    await loops.stop().catch(() => {});
    await store.close().catch(() => {});
    process.off('unhandledRejection', onUnhandledRejection);
    throw explainStartupFailure(error, config);
  }
  store.advertise?.(address); // CLI commands on the same data directory go through this server
  log.info(
    { address, database: store.kind, location: store.location },
    `rotscope listening on ${address}`,
  );

  let stopping: Promise<void> | undefined;
  return {
    url: address,
    stop() {
      stopping ??= (async () => {
        await built.shutdown(); // in-flight requests, then slow clients cut off at the limit
        await loops.stop();
        await store.close();
        process.off('unhandledRejection', onUnhandledRejection);
        log.info('rotscope stopped');
      })();
      return stopping;
    },
  };
}
