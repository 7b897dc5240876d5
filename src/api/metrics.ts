/**
 * Prometheus metrics (prom-client, one registry per app so tests and several apps in one
 * process do not share counters). Counted, never logged per span.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { FindingEvent } from '../evaluator/evaluate.ts';
import { DETECTOR_IDS, SEVERITIES } from '../model/findings.ts';

export interface Metrics {
  registry: Registry;
  /** Items received, by signal (spans, log_records). */
  received: Counter<'signal'>;
  /** Items stored, by signal. */
  accepted: Counter<'signal'>;
  /** Items refused, by signal and reason (invalid_span_id, undecodable, too_large, unauthorized, overloaded, workspace_overloaded, too_slow, store_behind, client_gone, db_unavailable, ...). */
  rejected: Counter<'signal' | 'reason'>;
  /** Items of no GenAI interest, counted and dropped at ingest. */
  dropped: Counter<'signal'>;
  requestDuration: Histogram<'route' | 'status'>;
  batchSize: Histogram<'signal'>;
  /** Ingest requests holding a slot now (from arrival until their response closes). */
  ingestInflight: Gauge;
  /** Bytes of ingest bodies (as sent and inflated) reserved in the byte budget now. */
  ingestInflightBytes: Gauge;
  /** OTLP metrics export requests (POST /v1/metrics), answered 200 and dropped unread. */
  metricsDropped: Counter;
  /** Rejections no code handled (bugs), logged and survived by `serve` (src/main.ts). */
  unhandledRejections: Counter;
  /** Findings this process's evaluator created, by detector and severity (see countFindingEvents). */
  findingsCreated: Counter<'detector' | 'severity'>;
  /** Findings this process's evaluator raised to critical, by detector. */
  findingsEscalated: Counter<'detector'>;
  /**
   * Evaluations this process's evaluator committed, by where their new calls came from: `memory`
   * (handed over by ingest as it committed them, src/store/call-memo.ts) or `database` (read back).
   */
  evaluations: Counter<'calls'>;
  /** Evaluator transactions that committed evaluations: evaluations over batches is the mean batch. */
  evaluatorBatches: Counter;
}

/**
 * Counts the findings an evaluation created or escalated, called after its transaction
 * committed (the evaluator's onEvaluated): each finding is counted once, by the process that
 * wrote it; `sum` over processes for the total.
 */
export function countFindingEvents(metrics: Metrics, events: readonly FindingEvent[]): void {
  for (const { detector, severity, event } of events) {
    if (event === 'created') metrics.findingsCreated.inc({ detector, severity });
    else metrics.findingsEscalated.inc({ detector });
  }
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics)
    collectDefaultMetrics({ register: registry, prefix: 'rotscope_process_' });
  const findingsCreated = new Counter({
    name: 'rotscope_findings_created_total',
    help: 'Findings created by this process, by detector and severity at creation',
    labelNames: ['detector', 'severity'],
    registers: [registry],
  });
  const findingsEscalated = new Counter({
    name: 'rotscope_findings_escalated_total',
    help: 'Findings raised to critical by this process, by detector',
    labelNames: ['detector'],
    registers: [registry],
  });
  // Every series exists from the start at 0, so rate() and alerts see the first finding.
  for (const detector of DETECTOR_IDS) {
    findingsEscalated.inc({ detector }, 0);
    for (const severity of SEVERITIES) findingsCreated.inc({ detector, severity }, 0);
  }
  const evaluations = new Counter({
    name: 'rotscope_evaluations_total',
    help: "Evaluations committed by this process, by where their new calls came from (memory: handed over by this process's ingest; database: read back)",
    labelNames: ['calls'],
    registers: [registry],
  });
  for (const calls of ['memory', 'database']) evaluations.inc({ calls }, 0);
  return {
    registry,
    findingsCreated,
    findingsEscalated,
    evaluations,
    evaluatorBatches: new Counter({
      name: 'rotscope_evaluator_batches_total',
      help: 'Transactions of the evaluator that committed evaluations (claimed together); evaluations over batches is the mean batch',
      registers: [registry],
    }),
    received: new Counter({
      name: 'rotscope_ingest_received_total',
      help: 'Spans and log records received over OTLP',
      labelNames: ['signal'],
      registers: [registry],
    }),
    accepted: new Counter({
      name: 'rotscope_ingest_accepted_total',
      help: 'Spans and log records committed to the store',
      labelNames: ['signal'],
      registers: [registry],
    }),
    rejected: new Counter({
      name: 'rotscope_ingest_rejected_total',
      help: 'Spans and log records refused, by reason',
      labelNames: ['signal', 'reason'],
      registers: [registry],
    }),
    dropped: new Counter({
      name: 'rotscope_ingest_dropped_total',
      help: 'Spans and log records of no GenAI interest, counted and dropped',
      labelNames: ['signal'],
      registers: [registry],
    }),
    requestDuration: new Histogram({
      name: 'rotscope_http_request_duration_seconds',
      help: 'HTTP request latency',
      labelNames: ['route', 'status'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    batchSize: new Histogram({
      name: 'rotscope_ingest_batch_size',
      help: 'Items per OTLP export request',
      labelNames: ['signal'],
      buckets: [1, 10, 50, 100, 250, 512, 1000, 2500, 5000, 10000],
      registers: [registry],
    }),
    ingestInflight: new Gauge({
      name: 'rotscope_ingest_inflight_requests',
      help: 'OTLP requests in flight (each holds one of ROTSCOPE_MAX_INFLIGHT_INGEST slots)',
      registers: [registry],
    }),
    ingestInflightBytes: new Gauge({
      name: 'rotscope_ingest_inflight_bytes',
      help: 'Bytes of OTLP request bodies in flight, as sent and inflated (budget: ROTSCOPE_MAX_INFLIGHT_BYTES)',
      registers: [registry],
    }),
    metricsDropped: new Counter({
      name: 'rotscope_ingest_metrics_requests_dropped_total',
      help: 'OTLP metrics export requests accepted and dropped (rotscope reads traces and logs only)',
      registers: [registry],
    }),
    unhandledRejections: new Counter({
      name: 'rotscope_unhandled_rejections_total',
      help: 'Promise rejections no code handled (a bug): logged, and the process keeps serving',
      registers: [registry],
    }),
  };
}
