/** GET /healthz (the process is up), /readyz (database reachable, migrations applied), /metrics. */
import type { FastifyInstance } from 'fastify';
import { currentVersion, loadMigrations } from '../store/migrate.ts';
import type { Store } from '../store/db.ts';
import type { Metrics } from './metrics.ts';

export async function healthRoutes(
  app: FastifyInstance,
  options: { store: Store; metrics: Metrics; isShuttingDown: () => boolean },
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

  app.get('/metrics', async (_request, reply) => {
    reply.type(options.metrics.registry.contentType);
    return options.metrics.registry.metrics();
  });
}
