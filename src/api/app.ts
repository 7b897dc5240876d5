/**
 * The app factory: builds the fastify instance with every route, the auth hook and the
 * error handler, without listening (src/main.ts listens and handles signals; tests use
 * `inject()` or listen on port 0).
 */
import type { CallMemo } from '../store/call-memo.ts';
import type { Socket } from 'node:net';
import fastifyCookie from '@fastify/cookie';
import fastifySwagger from '@fastify/swagger';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Resolver } from '../notifier/outbound.ts';
import type { Config } from '../config.ts';
import { createEventLog } from '../log/event-log.ts';
import type { Store } from '../store/db.ts';
import { registerAuth, type AuthFailureWriter } from './auth.ts';
import { hostName, registerHostGuard } from './host-guard.ts';
import { registerConsole } from './console.ts';
import { recordRefusals } from './refusals.ts';
import { refuse, Refusal, refusalOf, writeRefusal } from './errors.ts';
import { healthRoutes } from './health.ts';
import { ByteBudget, PendingWork } from '../receiver/inflight.ts';
import { IngestPipeline } from '../receiver/pipeline.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { answerComponents } from './openapi.ts';
import { otlpRoutes } from './otlp.ts';
import { apiRoutes } from './routes/index.ts';
import { routedPath } from './routed-path.ts';
import type { ApiDeps } from './types.ts';

export interface AppOptions {
  store: Store;
  config: Config;
  metrics?: Metrics;
  /** A pino logger; without one the app logs nothing. */
  logger?: FastifyBaseLogger;
  /** Resolves host names for channel destination checks (default: the system resolver). */
  resolveHost?: Resolver;
  /**
   * The memory of new calls this process's evaluator judges from (src/store/call-memo.ts):
   * given when the process evaluates, the same one `startBackgroundLoops` gets.
   */
  callMemo?: CallMemo | undefined;
}

export interface App {
  app: FastifyInstance;
  metrics: Metrics;
  pipeline: IngestPipeline;
  /** Marks the app as shutting down: /readyz answers 503 so load balancers stop sending. */
  beginShutdown(): void;
  /**
   * Shuts the HTTP side down: refuses new requests (503 + Retry-After), stops accepting
   * connections, closes idle ones, and waits up to `config.shutdownTimeoutMs` for requests in
   * flight; then closes every connection left (slow clients) except those whose ingest commit
   * is running, and waits for those commits to answer. Safe to call more than once.
   */
  shutdown(): Promise<void>;
}

export async function buildApp(options: AppOptions): Promise<App> {
  const { store, config } = options;
  const metrics = options.metrics ?? createMetrics();
  const pipeline = new IngestPipeline(store, { ...config, callMemo: options.callMemo });
  const work = new PendingWork();
  let shuttingDown = false;

  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    forceCloseConnections: 'idle',
    // One log line per event of note, not per request: ingest batches are counted in /metrics.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1024 * 1024,
    // Time limits (src/config.ts): a slow or silent client cannot hold a connection or an
    // ingest slot for ever. Node checks them every connectionsCheckingInterval.
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    http: {
      headersTimeout: config.headersTimeoutMs,
      connectionsCheckingInterval: checkingIntervalMs(config),
    },
    // Shutdown refusals are ours (below), with Retry-After.
    return503OnClosing: false,
  });
  const events = createEventLog(app.log, { intervalMs: config.logEventIntervalMs });
  /** Open connections, for a shutdown that must cut off slow clients at its deadline. */
  const connections = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });

  app.addHook('onRequest', async (request, reply) => {
    const path = routedPath(request);
    if (!shuttingDown || path === '/healthz' || path === '/readyz') return;
    const refusal = new Refusal('unavailable', 'shutting down, retry later', {
      closeConnection: true,
    });
    return writeRefusal(request, reply, refusal, config.retryAfterSeconds);
  });

  app.addHook('onResponse', async (request, reply) => {
    metrics.requestDuration.observe(
      { route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  // Parses the console's session and CSRF cookies before the auth hook reads them.
  await app.register(fastifyCookie);
  /** Auth and the host guard refuse alike: counted, logged, in the OTLP or the API's form. */
  const writeFailure: AuthFailureWriter = (request, reply, failure) => {
    refusals.record(request, failure); // shown on the Coverage page (src/api/refusals.ts)
    events.event(
      'warn',
      `refused_${failure.status}`,
      request.workspaceId || 'unauthenticated',
      {
        status: failure.status,
        path: routedPath(request),
        remoteAddress: request.ip,
      },
      `request refused (${failure.status}): ${failure.message}`,
    );
    const refusal = Refusal.ofStatus(failure.status, failure.message);
    return writeRefusal(request, reply, refusal, config.retryAfterSeconds);
  };
  const auth = registerAuth(app, { store, host: config.host, writeFailure });
  const refusals = recordRefusals(app, { store, lookup: auth.lookup });
  registerHostGuard(app, {
    isOpen: () => auth.isOpen(),
    refuse: writeFailure,
    ...(config.publicUrl ? { publicHost: hostName(new URL(config.publicUrl).host) } : {}),
  });

  // The JSON API's error handler: the one map's refusals (./errors.ts), clear 4xx messages,
  // 5xx details hidden (logged instead). The OTLP routes write the same refusals their way.
  app.setErrorHandler((error, request, reply) => {
    const refusal = refusalOf(error);
    if (refusal.code === 'unstorable_value')
      request.log.warn({ err: error }, 'request refused a value the database cannot store');
    if (refusal.code === 'internal') request.log.error({ err: error }, 'request failed');
    return writeRefusal(request, reply, refusal, config.retryAfterSeconds);
  });
  app.setNotFoundHandler((request, reply) =>
    refuse(reply, 'not_found', `no route ${request.method} ${request.url}`),
  );

  // Before every route: its CSRF hook and security headers must cover them all.
  await registerConsole(app, {
    auth,
    secureCookies: config.publicUrl?.startsWith('https:') ?? false,
  });

  // The OpenAPI document of the JSON API, generated from the routes' own zod schemas.
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
    // The JSON API's schemas are zod (src/api/schemas.ts): turned into JSON Schema here, the
    // named answers once each, as components (src/api/openapi.ts).
    transform: jsonSchemaTransform,
    transformObject: answerComponents,
  });
  // Like the API: a read token once tokens exist, unless ROTSCOPE_PUBLIC_API_DOCS opens it.
  app.get(
    '/api/openapi.json',
    { schema: { hide: true }, config: config.publicApiDocs ? {} : { scope: 'read' } },
    async () => app.swagger(),
  );
  // One budget of ingest bytes in flight for OTLP bodies and transcript imports alike.
  const ingestBudget = new ByteBudget(
    config.maxInflightBytes,
    config.maxWorkspaceInflightBytes,
    (used) => metrics.ingestInflightBytes.set(used),
  );
  await app.register(otlpRoutes, { config, pipeline, metrics, work, events, budget: ingestBudget });
  await app.register(healthRoutes, {
    store,
    metrics,
    isShuttingDown: () => shuttingDown,
    publicMetrics: config.publicMetrics,
  });
  const deps: ApiDeps = {
    store,
    config,
    log: app.log,
    tokensChanged: auth.tokensChanged,
    pipeline,
    ingestBudget,
    ...(options.resolveHost ? { resolveHost: options.resolveHost } : {}),
  };
  for (const routes of apiRoutes) await app.register(routes, deps);

  let closing: Promise<void> | undefined;
  return {
    app,
    metrics,
    pipeline,
    beginShutdown() {
      shuttingDown = true;
    },
    shutdown() {
      closing ??= (async () => {
        shuttingDown = true;
        let timer: NodeJS.Timeout | undefined;
        const deadline = new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), config.shutdownTimeoutMs);
        });
        const closed = app.close();
        if ((await Promise.race([closed, deadline])) === 'timeout') {
          // Slow clients are cut off; a request whose commit is running still gets its answer.
          const cut = [...connections].filter((socket) => !work.isBusy(socket));
          app.log.warn(
            { timeoutMs: config.shutdownTimeoutMs, closed: cut.length },
            'shutdown: closing connections still open after the shutdown timeout',
          );
          for (const socket of cut) socket.destroy();
        }
        clearTimeout(timer);
        await closed;
        await work.settled();
      })();
      return closing;
    },
  };
}

/**
 * How often Node looks for connections past the headers or request timeout: often enough
 * that a timeout is enforced within a quarter of itself, at most once a second.
 */
function checkingIntervalMs(config: Config): number {
  const shortest = Math.min(config.headersTimeoutMs, config.requestTimeoutMs);
  return Math.max(10, Math.min(1_000, Math.floor(shortest / 4)));
}
