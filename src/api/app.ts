/**
 * The app factory: builds the fastify instance with every route, the auth hook and the
 * error handler, without listening (src/main.ts listens and handles signals; tests use
 * `inject()` or listen on port 0).
 */
import fastifySwagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import type { Store } from '../store/db.ts';
import { registerAuth } from './auth.ts';
import { isDatabaseUnavailable } from './errors.ts';
import { healthRoutes } from './health.ts';
import { IngestPipeline } from './ingest-pipeline.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { otlpRoutes, replyStatus } from './otlp.ts';
import { RPC_CODES } from '../otlp/responses.ts';
import { apiRoutes } from './routes/index.ts';
import type { ApiDeps } from './types.ts';

export interface AppOptions {
  store: Store;
  config: Config;
  metrics?: Metrics;
  /** A pino logger; without one the app logs nothing. */
  logger?: FastifyBaseLogger;
}

export interface App {
  app: FastifyInstance;
  metrics: Metrics;
  pipeline: IngestPipeline;
  /** Marks the app as shutting down: /readyz answers 503 so load balancers stop sending. */
  beginShutdown(): void;
}

export async function buildApp(options: AppOptions): Promise<App> {
  const { store, config } = options;
  const metrics = options.metrics ?? createMetrics();
  const pipeline = new IngestPipeline(store, config);
  let shuttingDown = false;

  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    forceCloseConnections: 'idle',
    // One log line per event of note, not per request: ingest batches are counted in /metrics.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1024 * 1024,
  });

  app.addHook('onResponse', async (request, reply) => {
    metrics.requestDuration.observe(
      { route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  registerAuth(app, {
    store,
    host: config.host,
    writeFailure: (request, reply, failure) => {
      if (request.url.startsWith('/v1/')) {
        const rpc =
          failure.status === 401
            ? RPC_CODES.UNAUTHENTICATED
            : failure.status === 403
              ? RPC_CODES.PERMISSION_DENIED
              : RPC_CODES.UNAVAILABLE;
        return replyStatus(
          request,
          reply,
          failure.status,
          rpc,
          failure.message,
          failure.status === 503 ? config.retryAfterSeconds : undefined,
        );
      }
      if (failure.status === 503) reply.header('retry-after', String(config.retryAfterSeconds));
      return reply
        .code(failure.status)
        .send({ error: errorName(failure.status), message: failure.message });
    },
  });

  // The JSON API's error handler: clear 4xx messages, 5xx details hidden (logged instead).
  app.setErrorHandler(
    (error: { statusCode?: number; message: string; validation?: unknown }, request, reply) => {
      const status = error.statusCode ?? 500;
      if (status < 500)
        return reply.code(status).send({ error: errorName(status), message: error.message });
      if (isDatabaseUnavailable(error)) {
        reply.header('retry-after', String(config.retryAfterSeconds));
        return reply
          .code(503)
          .send({ error: 'unavailable', message: 'database unavailable, retry later' });
      }
      request.log.error({ err: error }, 'request failed');
      return reply.code(500).send({ error: 'internal', message: 'internal error' });
    },
  );
  app.setNotFoundHandler((request, reply) =>
    reply
      .code(404)
      .send({ error: 'not_found', message: `no route ${request.method} ${request.url}` }),
  );

  // The OpenAPI document of the JSON API, generated from the routes' own schemas.
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'rotscope API',
        version: '1',
        description:
          'Findings, conversations, runs, coverage, alert settings, channels and deliveries. Send `Authorization: Bearer <token>`.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    hideUntagged: false,
  });
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(otlpRoutes, { config, pipeline, metrics });
  await app.register(healthRoutes, { store, metrics, isShuttingDown: () => shuttingDown });
  const deps: ApiDeps = { store, config, log: app.log };
  for (const routes of apiRoutes) await app.register(routes, deps);

  return {
    app,
    metrics,
    pipeline,
    beginShutdown() {
      shuttingDown = true;
    },
  };
}

function errorName(status: number): string {
  return (
    (
      {
        400: 'bad_request',
        401: 'unauthorized',
        403: 'forbidden',
        404: 'not_found',
        409: 'conflict',
        413: 'too_large',
        415: 'unsupported_media_type',
        429: 'too_many_requests',
        503: 'unavailable',
      } as Record<number, string>
    )[status] ?? 'error'
  );
}
