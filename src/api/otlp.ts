/**
 * The OTLP/HTTP routes (DESIGN §4): POST /v1/traces and /v1/logs, protobuf or JSON, optionally
 * gzip; the receiving itself (admission, body limits, decoding, the commit) is the receiver
 * stage's (src/receiver/otlp.ts). Answers in the request's encoding: 200 (with partialSuccess
 * when some items were rejected) only after the commit; a refusal as a google.rpc.Status with
 * its status and code from the one map (src/model/errors.ts): 400 for undecodable bodies and
 * values the database cannot store; 413 over the compressed or decompressed limit (a gzip bomb
 * stops inflating at the limit); 415 for other types or encodings; 429 when too many requests
 * are in flight; 503 when the database cannot be reached. Both 429 and 503 carry Retry-After.
 * POST /v1/metrics is accepted and dropped (counted): 200 with an empty
 * ExportMetricsServiceResponse.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import type { Signal } from '../otlp/responses.ts';
import {
  OtlpReceiver,
  unsupportedType,
  type Admitted,
  type Answer,
  type OtlpReceiverOptions,
} from '../receiver/otlp.ts';
import { Refusal, refusalOf, writeRefusal } from './errors.ts';

export interface OtlpRouteOptions extends OtlpReceiverOptions {
  config: Config;
}

export async function otlpRoutes(app: FastifyInstance, options: OtlpRouteOptions): Promise<void> {
  const { config } = options;
  const receiver = new OtlpReceiver(options);
  /** Each admitted request's reservation and the signal that aborts when its client goes away. */
  const admitted = new WeakMap<FastifyRequest, Admitted>();

  /** Counts a refusal under its code and answers it as a google.rpc.Status. */
  const refuse = (request: FastifyRequest, reply: FastifyReply, refusal: Refusal) => {
    receiver.refused(refusal, {
      url: request.url,
      route: request.routeOptions.url,
      workspaceId: request.workspaceId,
    });
    return writeRefusal(request, reply, refusal, config.retryAfterSeconds);
  };
  const answer = (request: FastifyRequest, reply: FastifyReply, result: Answer | Refusal) =>
    result instanceof Refusal
      ? refuse(request, reply, result)
      : reply.code(200).type(result.contentType).send(result.body);

  // The body is read raw, within the request's reservation: decoding (and decompression,
  // with its own limit) is the receiver's.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (request, payload, done) => {
    const held = admitted.get(request);
    if (!held) return done(null, Buffer.alloc(0)); // refused in onRequest: never read
    void receiver
      .read(payload, held, request.workspaceId)
      .then((body) => (body instanceof Refusal ? done(body) : done(null, body)));
  });

  app.setErrorHandler((error, request, reply) => {
    let refusal = refusalOf(error);
    // the framework's own words for these are not the receiver's
    if (!(error instanceof Refusal) && refusal.code === 'too_large')
      refusal = receiver.tooLarge(false);
    if (!(error instanceof Refusal) && refusal.code === 'unsupported_media_type')
      refusal = unsupportedType(request.headers['content-type']);
    if (refusal.code === 'unstorable_value')
      request.log.warn({ err: error }, 'ingest refused a value the database cannot store');
    if (refusal.code === 'internal') request.log.error({ err: error }, 'ingest failed');
    return refuse(request, reply, refusal);
  });

  app.addHook('onRequest', async (request, reply) => {
    const held = receiver.admit(
      request.workspaceId,
      request.routeOptions.url,
      request.headers['content-length'],
      reply.raw,
    );
    if (held instanceof Refusal) return refuse(request, reply, held);
    admitted.set(request, held);
  });

  const handle = (signal: Signal) => async (request: FastifyRequest, reply: FastifyReply) =>
    answer(
      request,
      reply,
      await receiver.receive(signal, {
        workspaceId: request.workspaceId,
        contentType: request.headers['content-type'],
        contentEncoding: request.headers['content-encoding'],
        body: (request.body as Buffer | undefined) ?? Buffer.alloc(0),
        admitted: admitted.get(request),
        connection: request.raw.socket,
      }),
    );

  app.post('/v1/traces', { config: { scope: 'ingest' } }, handle('traces'));
  app.post('/v1/logs', { config: { scope: 'ingest' } }, handle('logs'));
  app.post('/v1/metrics', { config: { scope: 'ingest' } }, async (request, reply) =>
    answer(request, reply, receiver.dropMetrics(request.headers['content-type'])),
  );
}
