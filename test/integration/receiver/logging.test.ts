/**
 * What a real `rotscope serve` (bin/rotscope.js, a child process) says at `info`, read from
 * its stdout (pino JSON): "listening" once; one line when data arrives, a finding is created,
 * a delivery succeeds, a request is refused (401, 403, 413, 429), rate-limited per kind and
 * workspace with a count of what was suppressed; never a token, webhook secret or URL path.
 * Also POST /v1/metrics from the OpenTelemetry metrics export path (protobuf and JSON): 200 with
 * an empty response, counted in /metrics.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import {
  convertLegacyHttpOptions,
  createOtlpHttpExportDelegate,
} from '@opentelemetry/otlp-exporter-base/node-http';
import {
  JsonMetricsSerializer,
  MetricsExporterMetricsHelper,
  ProtobufMetricsSerializer,
} from '@opentelemetry/otlp-transformer';
import { MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/store/db.ts';
import { migrate } from '../../../src/store/migrate.ts';
import { createToken } from '../../../src/store/workspaces.ts';
import { startChildServer, type ChildServer } from '../../helpers/child-server.ts';
import { startHttpReceiver, type HttpReceiver } from '../../helpers/http-receiver.ts';
import { hex, jsonRequest, jsonSpan, post } from '../../helpers/otlp-bodies.ts';
import { createTestDatabase } from '../../helpers/store.ts';

/**
 * The server's event-log interval. The rule itself (one line per kind and key per interval,
 * counting the rest) is tested on an injected clock (test/unit/log/event-log.test.ts); here a
 * real server's lines show it is applied, so the interval passes in real time: short, but
 * far longer than a burst of five refused requests takes (checked).
 */
const INTERVAL_MS = 1_500;
let dataDir: string;
let server: ChildServer;
let receiver: HttpReceiver;
let admin: string;
let reader: string;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'rotscope-logging-'));
  const url = await createTestDatabase();
  const store = await openStore({ databaseUrl: url, dataDir });
  try {
    await migrate(store.db);
    admin = (await createToken(store.db, 'default', 'admin')).token;
    reader = (await createToken(store.db, 'default', 'read')).token;
  } finally {
    await store.close();
  }
  receiver = await startHttpReceiver();
  server = await startChildServer({
    ...(url ? { DATABASE_URL: url } : { ROTSCOPE_DATA_DIR: dataDir }),
    ROTSCOPE_LOG_EVENT_INTERVAL_MS: String(INTERVAL_MS),
    ROTSCOPE_MAX_BODY_BYTES: '100000',
    ROTSCOPE_MAX_INFLIGHT_INGEST: '2',
    ROTSCOPE_ALLOW_PRIVATE_ADDRESSES: 'true',
    ROTSCOPE_EVALUATOR_QUIET_MS: '100',
    ROTSCOPE_EVALUATOR_POLL_MS: '100',
  });
});
afterAll(async () => {
  server?.process.kill('SIGTERM');
  await server?.exited;
  await receiver?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The JSON log lines printed so far. */
function logLines(): Array<Record<string, unknown>> {
  return server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Waits until `count` lines match and returns them. */
async function waitForLines(
  match: (line: Record<string, unknown>) => boolean,
  count = 1,
  timeoutMs = 20_000,
): Promise<Array<Record<string, unknown>>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const found = logLines().filter(match);
    if (found.length >= count || Date.now() > until) return found;
    await sleep(50);
  }
}

/** Waits until the server's /metrics matches `pattern`. */
async function waitForMetric(pattern: RegExp, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const text = await (
      await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${reader}` } })
    ).text();
    if (pattern.test(text)) return;
    if (Date.now() > until) throw new Error(`/metrics never matched ${String(pattern)}`);
    await sleep(25);
  }
}

const JSON_TYPE = { 'content-type': 'application/json' };
const body = JSON.stringify(jsonRequest([jsonSpan()]));

describe('log lines of a running server', () => {
  it('prints "listening" once', () => {
    const lines = server
      .output()
      .split('\n')
      .filter((line) => /listening/i.test(line));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 30,
      msg: `rotscope listening on ${server.url}`,
    });
  });

  it('logs one line per kind of refusal and workspace per interval, counting the rest', async () => {
    const unauthorized = () => post(`${server.url}/v1/traces`, body, JSON_TYPE);
    const sent = Date.now();
    const burst = await Promise.all(Array.from({ length: 5 }, unauthorized));
    expect(burst.map((r) => r.status)).toEqual([401, 401, 401, 401, 401]);
    // the whole burst fell within one interval (else two lines would be right)
    expect(Date.now() - sent).toBeLessThan(INTERVAL_MS);
    const first = await waitForLines((l) => l.event === 'refused_401');
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ level: 40, status: 401, path: '/v1/traces' });
    expect(first[0]!.msg).toContain('missing bearer token');
    // the interval since the line (pino's \`time\`: the server's clock, this machine's) has passed
    await sleep(Number(first[0]!.time) + INTERVAL_MS + 1 - Date.now());
    expect((await unauthorized()).status).toBe(401);
    const both = await waitForLines((l) => l.event === 'refused_401', 2);
    expect(both).toHaveLength(2);
    expect(both[1]).toMatchObject({ suppressed: 4 });

    const forbidden = await post(`${server.url}/v1/traces`, body, {
      ...JSON_TYPE,
      authorization: `Bearer ${reader}`,
    });
    expect(forbidden.status).toBe(403);
    expect(await waitForLines((l) => l.event === 'refused_403')).toHaveLength(1);

    const ingest = { ...JSON_TYPE, authorization: `Bearer ${admin}` };
    const big = JSON.stringify(jsonRequest(Array.from({ length: 500 }, () => jsonSpan())));
    expect((await post(`${server.url}/v1/traces`, big, ingest)).status).toBe(413);
    const tooLarge = await waitForLines((l) => l.event === 'refused_too_large');
    expect(tooLarge[0]).toMatchObject({ status: 413, workspace: 'default' });

    // Two requests hold both slots (bodies never finished); the third gets 429.
    const held = await Promise.all(
      [0, 1].map(async () => {
        const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
        socket.on('error', () => {});
        await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
        socket.write(
          `POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${admin}\r\n` +
            `Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
        );
        return socket;
      }),
    );
    // both are admitted (the server counts them in flight) before the third is sent
    await waitForMetric(/^rotscope_ingest_inflight_requests 2$/m);
    expect((await post(`${server.url}/v1/traces`, body, ingest)).status).toBe(429);
    for (const socket of held) socket.destroy();
    const overloaded = await waitForLines((l) => l.event === 'refused_overloaded');
    expect(overloaded[0]).toMatchObject({ status: 429, workspace: 'default' });
  });

  it('logs data received, the finding created and its delivery, and never a secret', async () => {
    const auth = { authorization: `Bearer ${admin}`, 'content-type': 'application/json' };
    const created = await fetch(`${server.url}/api/channels`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        type: 'webhook',
        name: 'hook',
        config: { url: `${receiver.url}/hooks/PATHSECRET42` },
      }),
    });
    expect(created.status).toBe(201);
    const channel = (await created.json()) as { id: string; config: { secret?: string } };
    const alert = (await (
      await fetch(`${server.url}/api/alerts/context-rot`, { headers: auth })
    ).json()) as Record<string, unknown>;
    const attached = await fetch(`${server.url}/api/alerts/context-rot`, {
      method: 'PUT',
      headers: auth,
      body: JSON.stringify({ ...alert, channels: [{ id: channel.id, minSeverity: 'info' }] }),
    });
    expect(attached.status).toBe(200);

    const cutOff = jsonSpan({
      traceId: hex(16),
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.conversation.id': 'logging-test',
        'gen_ai.usage.input_tokens': 1200,
        'gen_ai.usage.output_tokens': 4096,
        'gen_ai.response.finish_reasons': '["length"]',
      },
    });
    const sent = await post(`${server.url}/v1/traces`, JSON.stringify(jsonRequest([cutOff])), auth);
    expect(sent.status).toBe(200);

    const received = await waitForLines((l) => l.event === 'received_spans');
    expect(received[0]).toMatchObject({ level: 30, workspace: 'default', received: 1, stored: 1 });
    const findings = await waitForLines((l) => l.event === 'findings');
    expect(findings[0]).toMatchObject({
      level: 30,
      workspace: 'default',
      conversationId: expect.stringContaining('logging-test'),
      created: 1,
    });
    await receiver.waitFor(1, 20_000);
    const delivered = await waitForLines((l) => l.event === 'delivery_delivered');
    expect(delivered[0]).toMatchObject({ level: 30, workspace: 'default', channelType: 'webhook' });

    const output = server.output();
    expect(output).not.toContain(admin);
    expect(output).not.toContain(reader);
    expect(output).not.toContain('PATHSECRET42');
    if (channel.config.secret) expect(output).not.toContain(channel.config.secret);
  });
});

/** Collects metrics from a real MeterProvider, as an SDK does before each export. */
class CollectingReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

async function someMetrics(): Promise<ResourceMetrics> {
  const collector = new CollectingReader();
  const provider = new MeterProvider({ readers: [collector] });
  provider.getMeter('claude_code').createCounter('claude_code.token.usage').add(1234);
  const { resourceMetrics } = await collector.collect();
  await provider.shutdown();
  return resourceMetrics;
}

/** Exports through the OTLP/HTTP exporter path the OpenTelemetry metrics exporters use. */
function exportMetrics(encoding: 'protobuf' | 'json', metrics: ResourceMetrics) {
  const contentType = encoding === 'json' ? 'application/json' : 'application/x-protobuf';
  const exporter = new OTLPExporterBase(
    createOtlpHttpExportDelegate(
      convertLegacyHttpOptions(
        { url: `${server.url}/v1/metrics`, headers: { authorization: `Bearer ${admin}` } },
        'METRICS',
        'v1/metrics',
        { 'Content-Type': contentType },
      ),
      encoding === 'json' ? JsonMetricsSerializer : ProtobufMetricsSerializer,
      'otlp_http_metric_exporter',
      MetricsExporterMetricsHelper,
      undefined,
    ),
  );
  return new Promise<ExportResult>((resolve) => exporter.export(metrics, resolve)).finally(() =>
    exporter.shutdown(),
  );
}

describe('POST /v1/metrics', () => {
  it('answers 200 with an empty response in the request encoding, and counts what it drops', async () => {
    const metrics = await someMetrics();
    for (const encoding of ['protobuf', 'json'] as const) {
      const result = await exportMetrics(encoding, metrics);
      expect(result.code, `${encoding}: ${String(result.error)}`).toBe(ExportResultCode.SUCCESS);
    }
    const auth = { authorization: `Bearer ${admin}` };
    const proto = await post(
      `${server.url}/v1/metrics`,
      ProtobufMetricsSerializer.serializeRequest(metrics)!,
      { ...auth, 'content-type': 'application/x-protobuf' },
    );
    expect(proto.status).toBe(200);
    expect(proto.headers.get('content-type')).toMatch(/^application\/x-protobuf/);
    expect(proto.body.length).toBe(0);
    const json = await post(
      `${server.url}/v1/metrics`,
      JsonMetricsSerializer.serializeRequest(metrics)!,
      { ...auth, 'content-type': 'application/json' },
    );
    expect(json.status).toBe(200);
    expect(JSON.parse(json.body.toString())).toEqual({});
    const text = await (
      await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${reader}` } })
    ).text();
    expect(text).toMatch(/^rotscope_ingest_metrics_requests_dropped_total 4$/m);
  });
});
