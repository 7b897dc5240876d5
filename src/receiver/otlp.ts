/**
 * The OTLP/HTTP receiver's work, below its routes (src/api/otlp.ts registers them): admitting a
 * request before its body, reading the body within its reservation, decoding and storing a
 * batch, and counting what it refused. Every refusal is a {@link Refusal} of the one map
 * (src/model/errors.ts); the routes write it in the request's encoding.
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
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Counter, Gauge, Histogram } from 'prom-client';
import type { Config } from '../config.ts';
import { invalidTokenCount } from '../ingest/tokens.ts';
import type { EventLog } from '../log/event-log.ts';
import { Refusal, type RefusalCode } from '../model/errors.ts';
import { Slices } from '../model/slices.ts';
import type { Attributes, LogRecord, Rejection, Span } from '../model/telemetry.ts';
import { decodeLogs, decodeTracesSliced, type Encoding } from '../otlp/decode.ts';
import { CONTENT_TYPES, exportResponse, type Signal } from '../otlp/responses.ts';
import { CommitAdmission } from './commit-admission.ts';
import { AbandonedError } from './group-commit.ts';
import {
  ByteBudget,
  ByteRateLimit,
  clientGone,
  InflightSlots,
  type PendingWork,
  type Reservation,
} from './inflight.ts';
import { gunzipWithin, readBody, type BodyResult } from './ingest-body.ts';
import type { IngestPipeline } from './pipeline.ts';

const METRIC_SIGNAL: Record<Signal, string> = { traces: 'spans', logs: 'log_records' };

/** The encoding of a request, from its Content-Type; undefined when unsupported. */
export function encodingOf(contentType: string | undefined): Encoding | undefined {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  return undefined;
}

/** The metrics the receiver counts in (src/api/metrics.ts). */
export interface ReceiverMetrics {
  received: Counter<'signal'>;
  accepted: Counter<'signal'>;
  rejected: Counter<'signal' | 'reason'>;
  dropped: Counter<'signal'>;
  batchSize: Histogram<'signal'>;
  ingestInflight: Gauge;
  ingestInflightBytes: Gauge;
  metricsDropped: Counter;
}

export interface OtlpReceiverOptions {
  config: Config;
  pipeline: IngestPipeline;
  metrics: ReceiverMetrics;
  /** Ingest commits in progress: a shutdown waits for them before closing the store. */
  work: PendingWork;
  /** Rate-limited lines for data received and requests refused. */
  events: EventLog;
  /**
   * The byte budget of ingest bodies in flight, shared with POST /api/import (default: one of
   * `maxInflightBytes`, `maxWorkspaceInflightBytes` of the receiver's own).
   */
  budget?: ByteBudget;
}

/** An admitted request's reservation, how much of it its Content-Length took, and its client's going. */
export interface Admitted {
  reservation: Reservation;
  reserved: number;
  /** Aborts when the client goes away before the answer. */
  gone: AbortSignal;
}

/** A request whose body has arrived. */
export interface Batch {
  workspaceId: string;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  body: Buffer;
  /** What {@link OtlpReceiver.admit} gave it (undefined: refused before its body). */
  admitted: Admitted | undefined;
  /** The connection it came on: a shutdown lets its commit answer. */
  connection: object;
}

/** The answer to a batch: its body in the request's encoding. */
export interface Answer {
  contentType: string;
  body: Buffer | string;
}

export class OtlpReceiver {
  readonly #config: Config;
  readonly #metrics: ReceiverMetrics;
  readonly #events: EventLog;
  readonly #pipeline: IngestPipeline;
  readonly #work: PendingWork;
  readonly #slots: InflightSlots;
  readonly #admission: CommitAdmission;
  readonly #budget: ByteBudget;
  readonly #rate: ByteRateLimit;

  constructor(options: OtlpReceiverOptions) {
    const { config, metrics } = options;
    this.#config = config;
    this.#metrics = metrics;
    this.#events = options.events;
    this.#pipeline = options.pipeline;
    this.#work = options.work;
    this.#slots = new InflightSlots(
      config.maxInflightIngest,
      Math.min(config.maxWorkspaceInflightIngest, config.maxInflightIngest),
      (used) => metrics.ingestInflight.set(used),
    );
    this.#admission = new CommitAdmission(config.maxIngestCommitWaitMs);
    this.#budget =
      options.budget ??
      new ByteBudget(config.maxInflightBytes, config.maxWorkspaceInflightBytes, (used) =>
        metrics.ingestInflightBytes.set(used),
      );
    this.#rate = new ByteRateLimit(config.workspaceIngestBytesPerSecond);
  }

  /**
   * Admits a request from its headers, before its body: a slot, the commit admission (not for
   * /v1/metrics), the declared length, the workspace's rate and the byte budget.
   */
  admit(
    workspaceId: string,
    path: string | undefined,
    contentLength: string | undefined,
    response: ServerResponse,
  ): Admitted | Refusal {
    const config = this.#config;
    const owner = workspaceId || 'default';
    const slot = this.#slots.tryAcquire(owner, response);
    if (slot !== 'acquired') {
      return slot === 'full'
        ? new Refusal('overloaded', 'too many requests in flight')
        : new Refusal(
            'workspace_overloaded',
            `too many requests in flight for this workspace (${this.#slots.perOwnerMax})`,
          );
    }
    // Before the body is read; checked again once it has arrived (receive, below).
    if (path !== '/v1/metrics' && !this.#admission.admits()) return this.#storeBehind();
    const length = Number(contentLength ?? 0);
    const declared = Number.isSafeInteger(length) && length > 0 ? length : 0;
    if (declared > config.maxBodyBytes) return this.tooLarge();
    const wait = this.#rate.waitSeconds(owner);
    if (wait > 0) {
      const message = `workspace over its ingest rate (${config.workspaceIngestBytesPerSecond} bytes/s)`;
      return new Refusal('rate_limited', message, { retryAfterSeconds: Math.max(wait, 1) });
    }
    const reservation = this.#budget.open(owner, declared, response);
    if (!reservation) return this.#overBudget(workspaceId);
    return { reservation, reserved: declared, gone: clientGone(response) };
  }

  /** Reads an admitted request's body within its reservation, above the floor rate. */
  async read(stream: Readable, admitted: Admitted, workspaceId: string): Promise<Buffer | Refusal> {
    const config = this.#config;
    const result = await readBody(
      stream,
      config.maxBodyBytes,
      admitted.reservation,
      admitted.reserved,
      { bytesPerSecond: config.minIngestBytesPerSecond, graceMs: config.ingestBodyGraceMs },
    );
    if (result.ok) return result.body;
    switch (result.reason) {
      case 'over_budget':
        return this.#overBudget(workspaceId);
      case 'too_slow':
        return new Refusal(
          'too_slow',
          `request body slower than ${config.minIngestBytesPerSecond} bytes/s`,
          { closeConnection: true }, // the rest of the body is not read
        );
      case 'too_large':
        return this.tooLarge(false);
      default:
        return new Refusal('bad_request', `request body ${result.reason}`);
    }
  }

  /** 413 for a body over `maxBodyBytes`. */
  tooLarge(closeConnection = true): Refusal {
    return new Refusal('too_large', `request body over ${this.#config.maxBodyBytes} bytes`, {
      closeConnection,
    });
  }

  /**
   * Decodes and stores a batch whose body has arrived: admitted again (requests that arrived
   * together were all let in before any of them was counted) and counted by the commit
   * admission until its answer, the check and the count in one synchronous step. Resolves
   * after the commit.
   */
  async receive(signal: Signal, batch: Batch): Promise<Answer | Refusal> {
    if (!this.#admission.admits()) return this.#storeBehind();
    return this.#admission.run(() => this.#receive(signal, batch));
  }

  async #receive(signal: Signal, batch: Batch): Promise<Answer | Refusal> {
    const config = this.#config;
    const metrics = this.#metrics;
    const metricSignal = METRIC_SIGNAL[signal];
    const gone = batch.admitted?.gone;
    const encoding = encodingOf(batch.contentType);
    if (!encoding) return unsupportedType(batch.contentType);
    let body = batch.body;
    const contentEncoding = (batch.contentEncoding ?? 'identity').toString().trim().toLowerCase();
    if (contentEncoding === 'gzip') {
      const inflated: BodyResult = batch.admitted
        ? await gunzipWithin(body, config.maxDecompressedBytes, batch.admitted.reservation, gone)
        : { ok: false, reason: 'over_budget' };
      if (!inflated.ok) {
        if (inflated.reason === 'aborted') return abandoned();
        if (inflated.reason === 'over_budget') return this.#overBudget(batch.workspaceId);
        return inflated.reason === 'too_large'
          ? new Refusal('too_large', `decompressed body over ${config.maxDecompressedBytes} bytes`)
          : new Refusal('undecodable', 'invalid gzip body');
      }
      body = inflated.body;
    } else if (contentEncoding !== 'identity') {
      return new Refusal(
        'unsupported_media_type',
        `unsupported Content-Encoding "${contentEncoding}" (use gzip or none)`,
      );
    }

    this.#rate.charge(batch.workspaceId || 'default', body.length);
    if (gone?.aborted) return abandoned();
    // a large batch is read in slices that give the event loop back (../model/slices.ts)
    const decoded =
      signal === 'traces' ? await decodeTracesSliced(body, encoding) : decodeLogs(body, encoding);
    if (!decoded.ok) return new Refusal('undecodable', decoded.reason);
    const { items: decodedItems, rejected } = decoded.value;
    // Token counts that cannot be stored exactly refuse their span, not the batch.
    const items = await storableCounts<Span | LogRecord>(decodedItems, rejected);
    metrics.received.inc({ signal: metricSignal }, items.length + rejected.length);
    metrics.batchSize.observe({ signal: metricSignal }, items.length + rejected.length);
    for (const rejection of rejected)
      metrics.rejected.inc({ signal: metricSignal, reason: rejection.reason });

    let outcome;
    try {
      outcome = await this.#work.run(
        () =>
          signal === 'traces'
            ? this.#pipeline.ingestSpans(
                batch.workspaceId,
                items as Parameters<IngestPipeline['ingestSpans']>[1],
                gone,
              )
            : this.#pipeline.ingestLogs(
                batch.workspaceId,
                items as Parameters<IngestPipeline['ingestLogs']>[1],
                gone,
              ),
        batch.connection,
      );
    } catch (error) {
      if (error instanceof AbandonedError) return abandoned();
      throw error;
    }
    metrics.accepted.inc({ signal: metricSignal }, outcome.stored);
    metrics.dropped.inc({ signal: metricSignal }, outcome.dropped);
    this.#events.event(
      'info',
      `received_${metricSignal}`,
      batch.workspaceId,
      {
        received: items.length + rejected.length,
        stored: outcome.stored,
        dropped: outcome.dropped,
        rejected: rejected.length,
      },
      `ingest: ${metricSignal} received`,
    );
    return {
      contentType: CONTENT_TYPES[encoding],
      body: exportResponse(signal, encoding, rejected.length, rejectionMessage(rejected)),
    };
  }

  /**
   * Metrics are not read (Claude Code's docs turn them on beside logs): answering 200 with an
   * empty ExportMetricsServiceResponse (no bytes in protobuf, {} in JSON) stops the exporter
   * from logging a failure on every export.
   */
  dropMetrics(contentType: string | undefined): Answer | Refusal {
    const encoding = encodingOf(contentType);
    if (!encoding) return unsupportedType(contentType);
    this.#metrics.metricsDropped.inc();
    return {
      contentType: CONTENT_TYPES[encoding],
      body: encoding === 'json' ? '{}' : Buffer.alloc(0),
    };
  }

  /** Counts a refusal under its code and logs it (rate-limited); a failure of ours is not counted. */
  refused(
    refusal: Refusal,
    where: { url: string; route: string | undefined; workspaceId: string },
  ) {
    if (refusal.code === 'internal') return;
    const signal = where.url.startsWith('/v1/logs')
      ? METRIC_SIGNAL.logs
      : where.url.startsWith('/v1/metrics')
        ? 'metrics'
        : METRIC_SIGNAL.traces;
    const reason: RefusalCode = refusal.code;
    this.#metrics.rejected.inc({ signal, reason });
    this.#events.event(
      'warn',
      `refused_${reason}`,
      where.workspaceId || 'unauthenticated',
      { status: refusal.status, path: where.route ?? where.url.split('?')[0], reason },
      `ingest request refused (${refusal.status}): ${refusal.message}`,
    );
  }

  /** 429 for a body the byte budget cannot take; the connection closes, its rest unread. */
  #overBudget(workspaceId: string): Refusal {
    const config = this.#config;
    const message = workspaceId
      ? `ingest bytes in flight over the budget (${config.maxInflightBytes} bytes, ${config.maxWorkspaceInflightBytes} per workspace)`
      : 'ingest bytes in flight over the budget';
    return new Refusal('overloaded', message, { closeConnection: true });
  }

  /** 429 for a batch the store could not commit in time (./commit-admission.ts). */
  #storeBehind(): Refusal {
    const wait = (this.#admission.expectedWaitMs() / 1000).toFixed(1);
    const message = `the store is behind: a batch accepted now would wait ~${wait} s for its commit (limit ${this.#config.maxIngestCommitWaitMs} ms)`;
    return new Refusal('store_behind', message);
  }
}

/** The refusal of a Content-Type that is neither OTLP protobuf nor OTLP JSON. */
export function unsupportedType(contentType: string | undefined): Refusal {
  return new Refusal(
    'unsupported_media_type',
    `unsupported Content-Type "${contentType ?? ''}" (use application/x-protobuf or application/json)`,
  );
}

/** The answer to a batch whose client went away: nothing stored, counted, sent to nobody. */
function abandoned(): Refusal {
  return new Refusal('client_gone', 'the client went away before the commit; nothing stored');
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

/** One line naming how many items were rejected for each reason, and the first detail. */
function rejectionMessage(rejected: readonly Rejection[]): string {
  if (rejected.length === 0) return '';
  const counts = new Map<string, number>();
  for (const r of rejected) counts.set(r.reason, (counts.get(r.reason) ?? 0) + 1);
  const summary = [...counts.entries()].map(([reason, n]) => `${n} ${reason}`).join(', ');
  return `rejected ${summary}; first: ${rejected[0]!.detail}`;
}
