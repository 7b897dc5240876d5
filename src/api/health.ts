/**
 * GET /healthz (the process is up), /readyz (database reachable, migrations applied), /metrics
 * (a `read` token once tokens exist, like the API, unless `publicMetrics` opens it).
 */
import type { FastifyInstance } from 'fastify';
import { currentVersion, loadMigrations } from '../store/migrate.ts';
import type { Store } from '../store/db.ts';
import type { Metrics } from './metrics.ts';

export async function healthRoutes(
  app: FastifyInstance,
  options: {
    store: Store;
    metrics: Metrics;
    isShuttingDown: () => boolean;
    /** Serve /metrics without a token (ROTSCOPE_PUBLIC_METRICS). */
    publicMetrics?: boolean;
  },
): Promise<void> {
  const expected = loadMigrations().at(-1)?.version ?? 0;

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    if (options.isShuttingDown()) return reply.code(503).send({ status: 'shutting_down' });
    try {
      const version = await currentVersion(options.store.db);
      if (version < expected) {
        return reply
          .code(503)
          .send({ status: 'migrations_pending', schemaVersion: version, expected });
      }
      return { status: 'ready', database: options.store.kind, schemaVersion: version };
    } catch {
      return reply.code(503).send({ status: 'database_unreachable' });
    }
  });

  const metricsScope = options.publicMetrics ? {} : { scope: 'read' as const };
  app.get('/metrics', { config: metricsScope }, async (_request, reply) => {
    reply.type(options.metrics.registry.contentType);
    return options.metrics.registry.metrics();
  });
}
