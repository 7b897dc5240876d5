/** Builders for ingest unit tests: spans and log records with defaults, and a test-local OTLP/JSON reader. */
import type { Attributes, AttrValue, LogRecord, Span } from '../../../src/model/telemetry.ts';
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

// ---- test-local OTLP/JSON reader: resourceSpans or Tempo `batches`, scopeSpans or
// instrumentationLibrarySpans, hex or base64 ids, int64 as strings or (lossy) numbers.

type J = Record<string, unknown>;

function id(v: unknown): string {
  if (typeof v !== 'string' || v === '') return '';
  if (/^[0-9a-f]+$/i.test(v) && (v.length === 32 || v.length === 16)) return v.toLowerCase();
  return Buffer.from(v, 'base64').toString('hex');
}

function anyValue(v: unknown): AttrValue {
  const o = (v ?? {}) as J;
  if ('stringValue' in o) return String(o['stringValue']);
  if ('boolValue' in o) return Boolean(o['boolValue']);
  if ('intValue' in o) return Number(o['intValue']);
  if ('doubleValue' in o) return Number(o['doubleValue']);
  if ('arrayValue' in o)
    return (((o['arrayValue'] as J)['values'] as unknown[]) ?? []).map(anyValue);
  if ('kvlistValue' in o) return attrs((o['kvlistValue'] as J)['values']);
  if ('bytesValue' in o) return String(o['bytesValue']);
  return null;
}

function attrs(list: unknown): Attributes {
  const out: Attributes = {};
  for (const kv of (list as J[] | undefined) ?? []) out[String(kv['key'])] = anyValue(kv['value']);
  return out;
}

const KINDS: Record<string, number> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 1,
  SPAN_KIND_SERVER: 2,
  SPAN_KIND_CLIENT: 3,
  SPAN_KIND_PRODUCER: 4,
  SPAN_KIND_CONSUMER: 5,
};

/** Decodes OTLP/JSON trace requests (one, an array, or a Tempo export) into model spans. */
export function spansFromOtlpJson(text: string): Span[] {
  // keep int64 timestamps exact: quote bare numbers before JSON.parse
  const quoted = text.replace(
    /"(startTimeUnixNano|endTimeUnixNano|timeUnixNano)":\s*(\d+)/g,
    '"$1":"$2"',
  );
  const whole = JSON.parse(quoted) as unknown;
  const requests = (Array.isArray(whole) ? whole : [whole]) as J[];
  const out: Span[] = [];
  for (const req of requests) {
    const resourceSpans = (req['resourceSpans'] ?? req['batches'] ?? []) as J[];
    for (const rs of resourceSpans) {
      const resource = attrs((rs['resource'] as J | undefined)?.['attributes']);
      const scopes = (rs['scopeSpans'] ?? rs['instrumentationLibrarySpans'] ?? []) as J[];
      for (const ss of scopes) {
        const sc = (ss['scope'] ?? ss['instrumentationLibrary'] ?? {}) as J;
        for (const s of (ss['spans'] as J[] | undefined) ?? []) {
          const kind = s['kind'];
          out.push({
            traceId: id(s['traceId']),
            spanId: id(s['spanId']),
            parentSpanId: id(s['parentSpanId']) || null,
            name: String(s['name'] ?? ''),
            kind: typeof kind === 'number' ? kind : (KINDS[String(kind)] ?? 0),
            startTimeUnixNano: String(s['startTimeUnixNano'] ?? '0'),
            endTimeUnixNano: String(s['endTimeUnixNano'] ?? '0'),
            attributes: attrs(s['attributes']),
            events: ((s['events'] as J[] | undefined) ?? []).map((e) => ({
              name: String(e['name'] ?? ''),
              timeUnixNano: String(e['timeUnixNano'] ?? '0'),
              attributes: attrs(e['attributes']),
            })),
            links: [],
            statusCode: 0,
            statusMessage: '',
            resource,
            scope: { name: String(sc['name'] ?? ''), version: String(sc['version'] ?? '') },
          });
        }
      }
    }
  }
  return out;
}
