/**
 * The OTLP/HTTP receiver (DESIGN §4): POST /v1/traces and /v1/logs, protobuf or JSON,
 * optionally gzip. Answers in the request's encoding: 200 (with partialSuccess when some
 * items were rejected) only after the commit; 400 google.rpc.Status for undecodable bodies;
 * 413 over the compressed or decompressed limit (a gzip bomb stops inflating at the limit);
 * 415 for other types or encodings; 429 when too many requests are in flight; 503 when the
 * database cannot be reached. Both 429 and 503 carry Retry-After. POST /v1/metrics is accepted
 * and dropped (counted): 200 with an empty ExportMetricsServiceResponse.
 *
 * Each request holds one of `maxInflightIngest` slots (at most `maxWorkspaceInflightIngest` per
 * workspace) from its arrival until its response closes, however it ends (answered, refused,
 * timed out, aborted by the client), and a reservation in the byte budget (`maxInflightBytes`,
 * at most `maxWorkspaceInflightBytes` per workspace) for its body as sent and inflated, taken
 * before each part is read or inflated. A body slower than `minIngestBytesPerSecond` (after
 * `ingestBodyGraceMs`) is cut off with 408. A workspace over its rate
 * (`workspaceIngestBytesPerSecond`) gets 429 until it has paid off. A batch the store could not
 * commit within `maxIngestCommitWaitMs` gets 429 at once (./commit-admission.ts). A batch whose
 * client went away before its commit is dropped (nothing stored, nothing for a shutdown to wait
 * for).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { invalidTokenCount } from '../ingest/tokens.ts';
import { decodeLogs, decodeTracesSliced, type Encoding } from '../otlp/decode.ts';
import {
  CONTENT_TYPES,
  RPC_CODES,
  exportResponse,
  statusBody,
  type Signal,
} from '../otlp/responses.ts';
import { Slices } from '../model/slices.ts';
import type { Attributes, LogRecord, Rejection, Span } from '../model/telemetry.ts';
import type { EventLog } from '../log/event-log.ts';
import { isDataError, isDatabaseUnavailable, isRetryableConflict } from './errors.ts';
import { CommitAdmission } from './commit-admission.ts';
import {
  ByteBudget,
  ByteRateLimit,
  clientGone,
  InflightSlots,
  type PendingWork,
  type Reservation,
} from './inflight.ts';
import { gunzipWithin, readBody, type BodyResult } from './ingest-body.ts';
import { AbandonedError } from '../receiver/group-commit.ts';
import type { IngestPipeline } from '../receiver/pipeline.ts';
import type { Metrics } from './metrics.ts';

const METRIC_SIGNAL: Record<Signal, string> = { traces: 'spans', logs: 'log_records' };

/** The encoding of a request, from its Content-Type; undefined when unsupported. */
export function encodingOf(contentType: string | undefined): Encoding | undefined {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  return undefined;
}

/** Error bodies follow the request's encoding; unknown types get JSON. */
export function replyStatus(
  request: FastifyRequest,
  reply: FastifyReply,
  httpStatus: number,
  rpcCode: number,
  message: string,
  retryAfterSeconds?: number,
): FastifyReply {
  const encoding = encodingOf(request.headers['content-type']) ?? 'json';
  if (retryAfterSeconds !== undefined) reply.header('retry-after', String(retryAfterSeconds));
  return reply
    .code(httpStatus)
    .type(CONTENT_TYPES[encoding])
    .send(statusBody(encoding, rpcCode, message));
}

export interface OtlpRouteOptions {
  config: Config;
  pipeline: IngestPipeline;
  metrics: Metrics;
  /** Ingest commits in progress: a shutdown waits for them before closing the store. */
  work: PendingWork;
  /** Rate-limited lines for data received and requests refused. */
  events: EventLog;
  /**
   * The byte budget of ingest bodies in flight, shared with POST /api/import (default: one of
   * `maxInflightBytes`, `maxWorkspaceInflightBytes` of these routes' own).
   */
  budget?: ByteBudget;
}

export async function otlpRoutes(app: FastifyInstance, options: OtlpRouteOptions): Promise<void> {
  const { config, metrics, events } = options;
  const slots = new InflightSlots(
    config.maxInflightIngest,
    Math.min(config.maxWorkspaceInflightIngest, config.maxInflightIngest),
    (used) => metrics.ingestInflight.set(used),
  );
  const admission = new CommitAdmission(config.maxIngestCommitWaitMs);
  const minimumRate = {
    bytesPerSecond: config.minIngestBytesPerSecond,
    graceMs: config.ingestBodyGraceMs,
  };

  const budget =
    options.budget ??
    new ByteBudget(config.maxInflightBytes, config.maxWorkspaceInflightBytes, (used) =>
      metrics.ingestInflightBytes.set(used),
    );
  const rate = new ByteRateLimit(config.workspaceIngestBytesPerSecond);
  /**
   * Each admitted request's reservation, how much of it its Content-Length took, and the signal
   * that aborts when its client goes away before the answer.
   */
  const reservations = new WeakMap<
    FastifyRequest,
    { reservation: Reservation; reserved: number; gone: AbortSignal }
  >();

  // The body is read raw, within the request's reservation: decoding (and decompression,
  // with its own limit) is ours.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (request, payload, done) => {
    const held = reservations.get(request);
    if (!held) return done(null, Buffer.alloc(0)); // refused in onRequest: never read
    void readBody(payload, config.maxBodyBytes, held.reservation, held.reserved, minimumRate).then(
      (result) => (result.ok ? done(null, result.body) : done(bodyError(result))),
    );
  });

  /** Counts a refused request under `reason` and answers with a google.rpc.Status. */
  const refuse = (
    request: FastifyRequest,
    reply: FastifyReply,
    reason: string,
    httpStatus: number,
    rpcCode: number,
    message: string,
    retryAfterSeconds?: number,
  ) => {
    const signal = request.url.startsWith('/v1/logs')
      ? METRIC_SIGNAL.logs
      : request.url.startsWith('/v1/metrics')
        ? 'metrics'
        : METRIC_SIGNAL.traces;
    metrics.rejected.inc({ signal, reason });
    events.event(
      'warn',
      `refused_${reason}`,
      request.workspaceId || 'unauthenticated',
      { status: httpStatus, path: request.routeOptions.url ?? request.url.split('?')[0], reason },
      `ingest request refused (${httpStatus}): ${message}`,
    );
    return replyStatus(request, reply, httpStatus, rpcCode, message, retryAfterSeconds);
  };
  const { INVALID_ARGUMENT } = RPC_CODES;

  app.setErrorHandler(
    (error: { statusCode?: number; message: string; code?: string }, request, reply) => {
      const status = error.statusCode ?? 500;
      if (error.code === OVER_BUDGET) return refuseOverBudget(request, reply);
      if (error.code === TOO_SLOW) {
        reply.header('connection', 'close'); // the rest of the body is not read
        const message = `request body slower than ${config.minIngestBytesPerSecond} bytes/s`;
        return refuse(request, reply, 'too_slow', 408, RPC_CODES.DEADLINE_EXCEEDED, message);
      }
      if (status === 413) {
        const message = `request body over ${config.maxBodyBytes} bytes`;
        return refuse(request, reply, 'too_large', 413, INVALID_ARGUMENT, message);
      }
      if (status === 415) {
        const message = unsupportedTypeMessage(request);
        return refuse(request, reply, 'unsupported_media_type', 415, INVALID_ARGUMENT, message);
      }
      if (status >= 400 && status < 500) {
        return refuse(request, reply, 'bad_request', status, INVALID_ARGUMENT, error.message);
      }
      if (isDatabaseUnavailable(error)) {
        const message = 'database unavailable, retry later';
        return refuse(
          request,
          reply,
          'db_unavailable',
          503,
          RPC_CODES.UNAVAILABLE,
          message,
          config.retryAfterSeconds,
        );
      }
      if (isRetryableConflict(error)) {
        // ingest retried it already; the exporter sends the batch again after Retry-After
        const message = 'the batch lost a race with a concurrent write, retry later';
        return refuse(
          request,
          reply,
          'write_conflict',
          503,
          RPC_CODES.UNAVAILABLE,
          message,
          config.retryAfterSeconds,
        );
      }
      if (isDataError(error)) {
        request.log.warn({ err: error }, 'ingest refused a value the database cannot store');
        const message = `a value in this request cannot be stored: ${error.message}`;
        return refuse(request, reply, 'unstorable_value', 400, INVALID_ARGUMENT, message);
      }
      request.log.error({ err: error }, 'ingest failed');
      return replyStatus(request, reply, 500, RPC_CODES.INTERNAL, 'internal error');
    },
  );

  /** 429 for a body the byte budget cannot take; the connection closes, its rest unread. */
  const refuseOverBudget = (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('connection', 'close');
    const message = request.workspaceId
      ? `ingest bytes in flight over the budget (${config.maxInflightBytes} bytes, ${config.maxWorkspaceInflightBytes} per workspace)`
      : 'ingest bytes in flight over the budget';
    return refuse(
      request,
      reply,
      'overloaded',
      429,
      RPC_CODES.RESOURCE_EXHAUSTED,
      message,
      config.retryAfterSeconds,
    );
  };

  app.addHook('onRequest', async (request, reply) => {
    const owner = request.workspaceId || 'default';
    const slot = slots.tryAcquire(owner, reply.raw);
    if (slot !== 'acquired') {
      const message =
        slot === 'full'
          ? 'too many requests in flight'
          : `too many requests in flight for this workspace (${slots.perOwnerMax})`;
      return refuse(
        request,
        reply,
        slot === 'full' ? 'overloaded' : 'workspace_overloaded',
        429,
        RPC_CODES.RESOURCE_EXHAUSTED,
        message,
        config.retryAfterSeconds,
      );
    }
    // Before the body is read; checked again once it has arrived (handle, below).
    if (request.routeOptions.url !== '/v1/metrics' && !admission.admits())
      return refuseStoreBehind(request, reply);
    const length = Number(request.headers['content-length'] ?? 0);
    const declared = Number.isSafeInteger(length) && length > 0 ? length : 0;
    if (declared > config.maxBodyBytes) {
      reply.header('connection', 'close');
      const message = `request body over ${config.maxBodyBytes} bytes`;
      return refuse(request, reply, 'too_large', 413, INVALID_ARGUMENT, message);
    }
    const wait = rate.waitSeconds(owner);
    if (wait > 0) {
      const message = `workspace over its ingest rate (${config.workspaceIngestBytesPerSecond} bytes/s)`;
      return refuse(
        request,
        reply,
        'rate_limited',
        429,
        RPC_CODES.RESOURCE_EXHAUSTED,
        message,
        Math.max(wait, 1),
      );
    }
    const reservation = budget.open(owner, declared, reply.raw);
    if (!reservation) return refuseOverBudget(request, reply);
    reservations.set(request, { reservation, reserved: declared, gone: clientGone(reply.raw) });
  });

  /** 429 for a batch the store could not commit in time (./commit-admission.ts). */
  const refuseStoreBehind = (request: FastifyRequest, reply: FastifyReply) => {
    const wait = (admission.expectedWaitMs() / 1000).toFixed(1);
    const message = `the store is behind: a batch accepted now would wait ~${wait} s for its commit (limit ${config.maxIngestCommitWaitMs} ms)`;
    return refuse(
      request,
      reply,
      'store_behind',
      429,
      RPC_CODES.RESOURCE_EXHAUSTED,
      message,
      config.retryAfterSeconds,
    );
  };

  /**
   * A request whose body has arrived: admitted (again: requests that arrived together were all
   * let in before any of them was counted) and counted by the commit admission until its answer.
   * The check and the count happen in one synchronous step.
   */
  const handle = (signal: Signal) => async (request: FastifyRequest, reply: FastifyReply) => {
    if (!admission.admits()) return refuseStoreBehind(request, reply);
    return admission.run(() => handleBatch(signal, request, reply));
  };

  /** The answer to a batch whose client went away: nothing stored, counted, sent to nobody. */
  const abandoned = (request: FastifyRequest, reply: FastifyReply) =>
    refuse(
      request,
      reply,
      'client_gone',
      499, // nginx's "client closed request": seen only in the request-duration metric
      RPC_CODES.CANCELLED,
      'the client went away before the commit; nothing stored',
    );

  const handleBatch = async (signal: Signal, request: FastifyRequest, reply: FastifyReply) => {
    const metricSignal = METRIC_SIGNAL[signal];
    const gone = reservations.get(request)?.gone;
    const encoding = encodingOf(request.headers['content-type']);
    if (!encoding) {
      const message = unsupportedTypeMessage(request);
      return refuse(request, reply, 'unsupported_media_type', 415, INVALID_ARGUMENT, message);
    }
    let body = (request.body as Buffer | undefined) ?? Buffer.alloc(0);
    const contentEncoding = (request.headers['content-encoding'] ?? 'identity')
      .toString()
      .trim()
      .toLowerCase();
    if (contentEncoding === 'gzip') {
      const held = reservations.get(request);
      const inflated: BodyResult = held
        ? await gunzipWithin(body, config.maxDecompressedBytes, held.reservation, gone)
        : { ok: false, reason: 'over_budget' };
      if (!inflated.ok) {
        if (inflated.reason === 'aborted') return abandoned(request, reply);
        if (inflated.reason === 'over_budget') return refuseOverBudget(request, reply);
        return inflated.reason === 'too_large'
          ? refuse(
              request,
              reply,
              'too_large',
              413,
              INVALID_ARGUMENT,
              `decompressed body over ${config.maxDecompressedBytes} bytes`,
            )
          : refuse(request, reply, 'undecodable', 400, INVALID_ARGUMENT, 'invalid gzip body');
      }
      body = inflated.body;
    } else if (contentEncoding !== 'identity') {
      const message = `unsupported Content-Encoding "${contentEncoding}" (use gzip or none)`;
      return refuse(request, reply, 'unsupported_media_type', 415, INVALID_ARGUMENT, message);
    }

    rate.charge(request.workspaceId || 'default', body.length);
    if (gone?.aborted) return abandoned(request, reply);
    // a large batch is read in slices that give the event loop back (../model/slices.ts)
    const decoded =
      signal === 'traces' ? await decodeTracesSliced(body, encoding) : decodeLogs(body, encoding);
    if (!decoded.ok) {
      return refuse(request, reply, 'undecodable', 400, INVALID_ARGUMENT, decoded.reason);
    }
    const { items: decodedItems, rejected } = decoded.value;
    // Token counts that cannot be stored exactly refuse their span, not the batch.
    const items = await storableCounts<Span | LogRecord>(decodedItems, rejected);
    metrics.received.inc({ signal: metricSignal }, items.length + rejected.length);
    metrics.batchSize.observe({ signal: metricSignal }, items.length + rejected.length);
    for (const rejection of rejected)
      metrics.rejected.inc({ signal: metricSignal, reason: rejection.reason });

    let outcome;
    try {
      outcome = await options.work.run(
        () =>
          signal === 'traces'
            ? options.pipeline.ingestSpans(
                request.workspaceId,
                items as Parameters<IngestPipeline['ingestSpans']>[1],
                gone,
              )
            : options.pipeline.ingestLogs(
                request.workspaceId,
                items as Parameters<IngestPipeline['ingestLogs']>[1],
                gone,
              ),
        request.raw.socket,
      );
    } catch (error) {
      if (error instanceof AbandonedError) return abandoned(request, reply);
      throw error;
    }
    metrics.accepted.inc({ signal: metricSignal }, outcome.stored);
    metrics.dropped.inc({ signal: metricSignal }, outcome.dropped);
    events.event(
      'info',
      `received_${metricSignal}`,
      request.workspaceId,
      {
        received: items.length + rejected.length,
        stored: outcome.stored,
        dropped: outcome.dropped,
        rejected: rejected.length,
      },
      `ingest: ${metricSignal} received`,
    );
    return reply
      .code(200)
      .type(CONTENT_TYPES[encoding])
      .send(exportResponse(signal, encoding, rejected.length, rejectionMessage(rejected)));
  };

  app.post('/v1/traces', { config: { scope: 'ingest' } }, handle('traces'));
  app.post('/v1/logs', { config: { scope: 'ingest' } }, handle('logs'));

  // Metrics are not read (Claude Code's docs turn them on beside logs): answering 200 with an
  // empty ExportMetricsServiceResponse (no bytes in protobuf, {} in JSON) stops the exporter
  // from logging a failure on every export.
  app.post('/v1/metrics', { config: { scope: 'ingest' } }, async (request, reply) => {
    const encoding = encodingOf(request.headers['content-type']);
    if (!encoding) {
      const message = unsupportedTypeMessage(request);
      return refuse(request, reply, 'unsupported_media_type', 415, INVALID_ARGUMENT, message);
    }
    metrics.metricsDropped.inc();
    return reply
      .code(200)
      .type(CONTENT_TYPES[encoding])
      .send(encoding === 'json' ? '{}' : Buffer.alloc(0));
  });
}

/**
 * The items whose token counts can be stored; the others are added to `rejected`. In slices,
 * as the decoding before it.
 */
async function storableCounts<T extends { attributes: Attributes }>(
  items: readonly T[],
  rejected: Rejection[],
): Promise<T[]> {
  const storable: T[] = [];
  const slices = new Slices();
  for (const item of items) {
    const problem = invalidTokenCount(item.attributes);
    if (problem !== null) rejected.push({ reason: 'invalid_attribute', detail: problem });
    else storable.push(item);
    if (slices.spent()) await slices.next();
  }
  return storable;
}

const OVER_BUDGET = 'ROTSCOPE_OVER_BUDGET';
const TOO_SLOW = 'ROTSCOPE_TOO_SLOW';

/** The error a body parser reports for a body it stopped reading. */
function bodyError(result: Extract<BodyResult, { ok: false }>): Error {
  const error = new Error(
    result.reason === 'too_large' ? 'request body too large' : `request body ${result.reason}`,
  ) as Error & { statusCode: number; code?: string };
  error.statusCode =
    result.reason === 'too_large'
      ? 413
      : result.reason === 'over_budget'
        ? 429
        : result.reason === 'too_slow'
          ? 408
          : 400;
  if (result.reason === 'over_budget') error.code = OVER_BUDGET;
  if (result.reason === 'too_slow') error.code = TOO_SLOW;
  return error;
}

function unsupportedTypeMessage(request: FastifyRequest): string {
  return `unsupported Content-Type "${request.headers['content-type'] ?? ''}" (use application/x-protobuf or application/json)`;
}

/** One line naming how many items were rejected for each reason, and the first detail. */
function rejectionMessage(rejected: readonly Rejection[]): string {
  if (rejected.length === 0) return '';
  const counts = new Map<string, number>();
  for (const r of rejected) counts.set(r.reason, (counts.get(r.reason) ?? 0) + 1);
  const summary = [...counts.entries()].map(([reason, n]) => `${n} ${reason}`).join(', ');
  return `rejected ${summary}; first: ${rejected[0]!.detail}`;
}
