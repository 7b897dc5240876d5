/** Builders for ingest unit tests: spans and log records with defaults, and OTLP/JSON files as spans. */
import type { Attributes, LogRecord, Span } from '../../../src/model/telemetry.ts';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeLogs, decodeTraceJsonFile, decodeTraces } from '../../../src/otlp/decode.ts';
import type { NormalizeContext } from '../../../src/ingest/index.ts';

export const CTX: NormalizeContext = {
  workspaceId: 'ws',
  captureContent: true,
  windowOverrides: [],
};
export const NO_CONTENT: NormalizeContext = { ...CTX, captureContent: false };

let counter = 0;

/** A span with sensible defaults; ids are unique per call unless given. */
export function span(p: Partial<Span> & { attributes?: Attributes } = {}): Span {
  counter++;
  return {
    traceId: p.traceId ?? 'a'.repeat(32),
    spanId: p.spanId ?? counter.toString(16).padStart(16, '0'),
    parentSpanId: p.parentSpanId ?? null,
    name: p.name ?? 'span',
    kind: p.kind ?? 1,
    startTimeUnixNano: p.startTimeUnixNano ?? '1000000000000',
    endTimeUnixNano: p.endTimeUnixNano ?? '2000000000000',
    attributes: p.attributes ?? {},
    events: p.events ?? [],
    links: p.links ?? [],
    statusCode: p.statusCode ?? 0,
    statusMessage: p.statusMessage ?? '',
    resource: p.resource ?? {},
    scope: p.scope ?? { name: 'test', version: '1' },
  };
}

/** A log record with defaults. */
export function log(p: Partial<LogRecord> & { attributes?: Attributes } = {}): LogRecord {
  return {
    timeUnixNano: p.timeUnixNano ?? '5000000000000',
    observedTimeUnixNano: p.observedTimeUnixNano ?? '5000000000000',
    severityNumber: p.severityNumber ?? 9,
    severityText: p.severityText ?? '',
    eventName: p.eventName ?? '',
    body: p.body ?? null,
    attributes: p.attributes ?? {},
    traceId: p.traceId ?? null,
    spanId: p.spanId ?? null,
    resource: p.resource ?? {},
    scope: p.scope ?? { name: 'com.anthropic.claude_code.events', version: '2.1.0' },
  };
}

/** Decodes an OTLP/JSON file (one request, an array, or a Tempo export) with the project's decoder. */
export function spansFromOtlpJson(text: string): Span[] {
  const decoded = decodeTraceJsonFile(text);
  if (!decoded.ok) throw new Error(decoded.reason);
  if (decoded.value.rejected.length > 0) throw new Error(decoded.value.rejected[0]!.detail);
  return decoded.value.items;
}

/**
 * Every span and log record of one captured session (a folder of `NNN-traces.json|pb` and
 * `NNN-logs.json|pb` OTLP bodies, in arrival order), decoded as the receiver decodes them.
 */
export function capturedOtlp(dir: string): { spans: Span[]; logs: LogRecord[] } {
  const spans: Span[] = [];
  const logs: LogRecord[] = [];
  for (const f of readdirSync(dir).sort()) {
    if (!/-(traces|logs)\.(json|pb)$/.test(f)) continue;
    const raw = readFileSync(join(dir, f));
    const body = f.endsWith('.json') ? raw.toString('utf8') : raw;
    const encoding = f.endsWith('.json') ? 'json' : 'protobuf';
    if (f.includes('-traces.')) {
      const r = decodeTraces(body, encoding);
      if (!r.ok) throw new Error(`${f}: ${r.reason}`);
      spans.push(...r.value.items);
    } else {
      const r = decodeLogs(body, encoding);
      if (!r.ok) throw new Error(`${f}: ${r.reason}`);
      logs.push(...r.value.items);
    }
  }
  return { spans, logs };
}
