/** Bad input gets the right status and body, and costs nothing else (OTLP/HTTP spec, DESIGN §4). */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import {
  decodeExportResponse,
  decodeStatus,
  hex,
  jsonRequest,
  jsonSpan,
  post,
  protobufRequest,
} from '../../helpers/otlp-bodies.ts';

const PROTO = { 'content-type': 'application/x-protobuf' };
const JSON_TYPE = { 'content-type': 'application/json' };

let server: TestServer;
/** 200 MB of zeros gzip to ~200 KB: under the compressed limit, far over the decompressed one. */
let bomb: Buffer;
beforeAll(async () => {
  // gzipSync blocks this process for seconds on a loaded machine: done before the server
  // starts, it cannot outlast the keep-alive timeout of a connection fetch would then reuse
  bomb = gzipSync(Buffer.alloc(200 * 1024 * 1024), { level: 9 });
  server = await startTestServer({
    loops: false,
    // keepRawSpans: this test reads the raw spans, kept only with this setting (issue 22)
    config: { maxBodyBytes: 256 * 1024, maxDecompressedBytes: 1024 * 1024, keepRawSpans: true },
  });
});
afterAll(async () => {
  await server?.close();
});

async function spanCount(traceId: string): Promise<number> {
  const rows = await server.store.db
    .selectFrom('spans')
    .select('span_id')
    .where('trace_id', '=', traceId)
    .execute();
  return rows.length;
}

describe('the OTLP receiver', () => {
  it('answers 400 with a google.rpc.Status for truncated protobuf, and stores nothing', async () => {
    const traceId = hex(16);
    const body = protobufRequest([jsonSpan({ traceId }), jsonSpan({ traceId })]);
    const response = await post(
      `${server.url}/v1/traces`,
      body.subarray(0, body.length - 7),
      PROTO,
    );
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toContain('application/x-protobuf');
    const status = decodeStatus(response.body);
    expect(status.code).toBe(3);
    expect(status.message).toMatch(/^invalid protobuf/);
    expect(await spanCount(traceId)).toBe(0);
  });

  it('answers 400 for random bytes and for invalid JSON, with a JSON Status for JSON', async () => {
    const random = await post(
      `${server.url}/v1/traces`,
      Buffer.from([0xff, 0xff, 0xff, 0x0f, 0x01, 0x02]),
      PROTO,
    );
    expect(random.status).toBe(400);
    const json = await post(`${server.url}/v1/traces`, '{"resourceSpans": [', JSON_TYPE);
    expect(json.status).toBe(400);
    expect(JSON.parse(json.body.toString())).toMatchObject({
      code: 3,
      message: expect.stringMatching(/^invalid JSON/),
    });
    const notArray = await post(`${server.url}/v1/traces`, '{"resourceSpans": 5}', JSON_TYPE);
    expect(notArray.status).toBe(400);
    expect(JSON.parse(notArray.body.toString()).message).toBe('resourceSpans must be an array');
  });

  it.each(['json', 'protobuf'] as const)(
    'stores the valid spans of a %s batch with one invalid span and counts it in partialSuccess',
    async (encoding) => {
      const traceId = hex(16);
      const good = [jsonSpan({ traceId }), jsonSpan({ traceId }), jsonSpan({ traceId })];
      const bad = jsonSpan({ traceId, spanId: 'abcd' }); // 2 bytes, not 8
      const response =
        encoding === 'json'
          ? await post(
              `${server.url}/v1/traces`,
              JSON.stringify(jsonRequest([good[0], bad, good[1], good[2]])),
              JSON_TYPE,
            )
          : await post(
              `${server.url}/v1/traces`,
              protobufRequest([good[0]!, bad, good[1]!, good[2]!]),
              PROTO,
            );
      expect(response.status).toBe(200);
      const body =
        encoding === 'json'
          ? JSON.parse(response.body.toString())
          : decodeExportResponse(response.body);
      expect(body.partialSuccess).toMatchObject({
        rejectedSpans: encoding === 'json' ? '1' : 1,
        errorMessage: expect.stringContaining('1 invalid_span_id'),
      });
      expect(await spanCount(traceId)).toBe(3);
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(metrics).toMatch(
        /rotscope_ingest_rejected_total\{signal="spans",reason="invalid_span_id"\} [1-9]/,
      );
    },
  );

  it('stores strings with NUL and lone surrogates (which Postgres refuses) with U+FFFD in their place', async () => {
    const traceId = hex(16);
    const body = JSON.stringify(jsonRequest([jsonSpan({ traceId, name: 'chat' })]))
      .replace('"name":"chat"', '"name":"chat \\ud800 \\u0000 end"')
      .replace(
        '"gen_ai.operation.name"',
        '"gen_ai.operation.name","x":1}, {"key":"k\\udc00","value":{"stringValue":"v\\ud83d"}}, {"key":"y"',
      );
    const response = await post(`${server.url}/v1/traces`, body, JSON_TYPE);
    expect(response.status).toBe(200);
    const row = await server.store.db
      .selectFrom('spans')
      .select(['name', 'attributes'])
      .where('trace_id', '=', traceId)
      .executeTakeFirstOrThrow();
    expect(row.name).toBe('chat \uFFFD \uFFFD end');
    expect(row.attributes).toMatchObject({ 'k\uFFFD': 'v\uFFFD' });
  });

  it('creates no duplicates when the same batch is sent again', async () => {
    const traceId = hex(16);
    const body = JSON.stringify(jsonRequest([jsonSpan({ traceId }), jsonSpan({ traceId })]));
    for (let i = 0; i < 3; i++)
      expect((await post(`${server.url}/v1/traces`, body, JSON_TYPE)).status).toBe(200);
    expect(await spanCount(traceId)).toBe(2);
  });

  it('accepts gzip bodies', async () => {
    const traceId = hex(16);
    const body = gzipSync(protobufRequest([jsonSpan({ traceId })]));
    const response = await post(`${server.url}/v1/traces`, body, {
      ...PROTO,
      'content-encoding': 'gzip',
    });
    expect(response.status).toBe(200);
    expect(await spanCount(traceId)).toBe(1);
  });

  it('answers 415 for other content types and encodings', async () => {
    const text = await post(`${server.url}/v1/traces`, 'hello', { 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    expect(JSON.parse(text.body.toString()).message).toContain(
      'unsupported Content-Type "text/plain"',
    );
    const br = await post(`${server.url}/v1/traces`, '{}', {
      ...JSON_TYPE,
      'content-encoding': 'br',
    });
    expect(br.status).toBe(415);
  });

  it('answers 413 for an oversize body and for a gzip bomb, without inflating it all', async () => {
    const big = JSON.stringify(jsonRequest(Array.from({ length: 2_000 }, () => jsonSpan())));
    expect(big.length).toBeGreaterThan(256 * 1024);
    expect(bomb.length).toBeLessThan(256 * 1024);
    const oversize = await post(`${server.url}/v1/traces`, big, JSON_TYPE);
    expect(oversize.status).toBe(413);
    const before = process.memoryUsage().rss;
    const response = await post(`${server.url}/v1/traces`, bomb, {
      ...PROTO,
      'content-encoding': 'gzip',
    });
    expect(response.status).toBe(413);
    expect(decodeStatus(response.body).message).toContain('decompressed body over');
    expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024);
  });

  it('serves health, readiness, metrics and the OpenAPI document', async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'ready',
      schemaVersion: expect.any(Number),
    });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('rotscope_ingest_received_total');
    expect(metrics).toContain('rotscope_http_request_duration_seconds_bucket');
    expect(metrics).toContain('rotscope_ingest_batch_size_bucket');
    const openapi = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as {
      openapi: string;
      paths: object;
    };
    expect(openapi.openapi).toBe('3.1.0');
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining([
        '/api/findings',
        '/api/findings/{id}',
        '/api/alerts/context-rot',
        '/api/channels',
        '/api/coverage',
      ]),
    );
  });
});
