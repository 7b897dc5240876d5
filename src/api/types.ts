/** What route plugins receive, and the per-request auth context the auth hook sets. */
import type { FastifyBaseLogger } from 'fastify';
import type { Resolver } from '../notifier/outbound.ts';
import type { Config } from '../config.ts';
import type { Store } from '../store/db.ts';
import type { IngestPipeline } from '../receiver/pipeline.ts';
import type { ByteBudget } from '../receiver/inflight.ts';

import type { Scope } from '../model/tokens.ts';

export interface ApiDeps {
  store: Store;
  config: Config;
  log: FastifyBaseLogger;
  /**
   * Resolves host names when a channel's destination is checked (create, change, test).
   * Default: the system resolver. Tests pass one that answers without leaving the machine.
   */
  resolveHost?: Resolver;
  /** Tells the auth hook a token was created or revoked here (it drops its caches). */
  tokensChanged: () => void;
  /**
   * The OTLP routes' ingest pipeline: `rotscope import` through the server shares its group
   * commits (default: a pipeline of the import routes' own).
   */
  pipeline?: IngestPipeline;
  /**
   * The byte budget of ingest bodies in flight (`maxInflightBytes`) that POST /api/import
   * reserves its memory in: the OTLP routes' (src/api/app.ts shares one; default: a budget of
   * the import routes' own, of the same size).
   */
  ingestBudget?: ByteBudget;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The workspace the request's token belongs to (`default` when open on loopback). */
    workspaceId: string;
    /** The scope of the request's token (`admin` when open on loopback); unset on public routes. */
    scope: Scope | undefined;
  }
  interface FastifyContextConfig {
    /**
     * The token scope a route needs. `admin` satisfies every scope; `read` and `ingest` only
     * themselves. Routes without a scope are public (health, metrics, console assets).
     */
    scope?: Scope;
  }
}
