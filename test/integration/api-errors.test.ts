/**
 * The one map of refusals (src/model/errors.ts): every code walked through the map, then through
 * an OTLP route and a JSON API route (fastify `inject()`), each answered with the map's HTTP
 * status, and on OTLP with its google.rpc code; and the one data error that used to be a 400 on
 * OTLP and a 500 on the JSON API, now a 400 on both in the real app.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/api/app.ts';
import { refusalOf, writeRefusal } from '../../src/api/errors.ts';
import { defaultConfig } from '../../src/config.ts';
import {
  REFUSAL_CODES,
  REFUSALS,
  RPC_CODES,
  Refusal,
  type RefusalCode,
} from '../../src/model/errors.ts';
import { RpcStatus } from '../../src/otlp/proto.ts';
import { decodeStatus, jsonRequest, jsonSpan, protobufRequest } from '../helpers/otlp-bodies.ts';
import { createTestStore, type TestStore } from '../helpers/store.ts';

const { INVALID_ARGUMENT, RESOURCE_EXHAUSTED, UNAVAILABLE } = RPC_CODES;

/** The map as documented (docs and the issue): status and google.rpc code of every code. */
const EXPECTED: Record<RefusalCode, [status: number, rpc: number, jsonError: string]> = {
  bad_request: [400, INVALID_ARGUMENT, 'bad_request'],
  undecodable: [400, INVALID_ARGUMENT, 'undecodable'],
  unstorable_value: [400, INVALID_ARGUMENT, 'unstorable_value'],
  unsupported_file: [400, INVALID_ARGUMENT, 'unsupported_file'],
  unauthorized: [401, RPC_CODES.UNAUTHENTICATED, 'unauthorized'],
  forbidden: [403, RPC_CODES.PERMISSION_DENIED, 'forbidden'],
  not_found: [404, RPC_CODES.NOT_FOUND, 'not_found'],
  too_slow: [408, RPC_CODES.DEADLINE_EXCEEDED, 'too_slow'],
  conflict: [409, RPC_CODES.FAILED_PRECONDITION, 'conflict'],
  too_large: [413, INVALID_ARGUMENT, 'too_large'],
  unsupported_media_type: [415, INVALID_ARGUMENT, 'unsupported_media_type'],
  too_many_requests: [429, RESOURCE_EXHAUSTED, 'too_many_requests'],
  overloaded: [429, RESOURCE_EXHAUSTED, 'overloaded'],
  workspace_overloaded: [429, RESOURCE_EXHAUSTED, 'workspace_overloaded'],
  rate_limited: [429, RESOURCE_EXHAUSTED, 'rate_limited'],
  store_behind: [429, RESOURCE_EXHAUSTED, 'store_behind'],
  client_gone: [499, RPC_CODES.CANCELLED, 'client_gone'],
  internal: [500, RPC_CODES.INTERNAL, 'internal'],
  unavailable: [503, UNAVAILABLE, 'unavailable'],
  db_unavailable: [503, UNAVAILABLE, 'unavailable'],
  write_conflict: [503, UNAVAILABLE, 'unavailable'],
  error: [400, INVALID_ARGUMENT, 'error'],
};
const RETRY_AFTER = 7;

describe('the map of refusals', () => {
  it('is closed: every code has its status and google.rpc code', () => {
    expect([...REFUSAL_CODES].sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const code of REFUSAL_CODES) {
      const refusal = new Refusal(code, 'why');
      expect([refusal.status, refusal.rpc, refusal.error], code).toEqual(EXPECTED[code]);
      expect(REFUSALS[code].status).toBe(EXPECTED[code][0]);
      expect(refusal.retries, code).toBe(EXPECTED[code][0] === 429 || EXPECTED[code][0] === 503);
    }
  });

  it('turns framework statuses and store errors into codes of the map', () => {
    const status = (statusCode: number) => Object.assign(new Error('x'), { statusCode });
    expect(refusalOf(status(400)).code).toBe('bad_request');
    expect(refusalOf(status(404)).code).toBe('not_found');
    expect(refusalOf(status(413)).code).toBe('too_large');
    expect(refusalOf(status(415)).code).toBe('unsupported_media_type');
    expect(refusalOf(status(429)).code).toBe('too_many_requests');
    const other = refusalOf(status(405));
    expect([other.code, other.status]).toEqual(['error', 405]);
    expect(refusalOf(Object.assign(new Error('bad byte'), { code: '22021' })).code).toBe(
      'unstorable_value',
    );
    expect(refusalOf(Object.assign(new Error('x'), { code: '40001' })).code).toBe('write_conflict');
    expect(refusalOf(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })).code).toBe(
      'db_unavailable',
    );
    expect(refusalOf(new Error('bug')).code).toBe('internal');
    expect(refusalOf(status(500)).code).toBe('internal');
  });
});

describe('every code through an OTLP route and a JSON API route', () => {
  let probe: FastifyInstance;
  beforeAll(async () => {
    // One route on each surface that throws the refusal named in its query, answered by the
    // one writer (what the app's error handlers call).
    probe = Fastify({ logger: false });
    probe.removeAllContentTypeParsers();
    probe.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) =>
      done(null, body),
    );
    probe.setErrorHandler((error, request, reply) =>
      writeRefusal(request, reply, refusalOf(error), RETRY_AFTER),
    );
    const thrower = async (request: { query: unknown }) => {
      const { code } = request.query as { code: RefusalCode };
      throw new Refusal(code, `refused: ${code}`);
    };
    probe.post('/v1/traces', thrower);
    probe.get('/api/probe', thrower);
    await probe.ready();
  });
  afterAll(async () => {
    await probe?.close();
  });

  for (const code of REFUSAL_CODES) {
    it(code, async () => {
      const [status, rpc, jsonError] = EXPECTED[code];
      const retry = status === 429 || status === 503 ? String(RETRY_AFTER) : undefined;

      const otlp = await probe.inject({
        method: 'POST',
        url: `/v1/traces?code=${code}`,
        headers: { 'content-type': 'application/x-protobuf' },
        payload: Buffer.alloc(0),
      });
      expect(otlp.statusCode).toBe(status);
      expect(otlp.headers['content-type']).toContain('application/x-protobuf');
      expect(otlp.headers['retry-after']).toBe(retry);
      const decoded = RpcStatus.toObject(RpcStatus.decode(otlp.rawPayload)) as {
        code?: number;
        message?: string;
      };
      expect(decoded).toEqual({ code: rpc, message: `refused: ${code}` });

      const otlpJson = await probe.inject({
        method: 'POST',
        url: `/v1/traces?code=${code}`,
        headers: { 'content-type': 'application/json' },
        payload: '{}',
      });
      expect(otlpJson.statusCode).toBe(status);
      expect(otlpJson.json()).toEqual({ code: rpc, message: `refused: ${code}` });

      const api = await probe.inject({ method: 'GET', url: `/api/probe?code=${code}` });
      expect(api.statusCode).toBe(status);
      expect(api.headers['retry-after']).toBe(retry);
      expect(api.json()).toEqual({ error: jsonError, message: `refused: ${code}` });
    });
  }
});

describe('the app', () => {
  let store: TestStore;
  let app: App;
  beforeAll(async () => {
    store = await createTestStore();
    app = await buildApp({ store, config: defaultConfig() });
    await app.app.ready();
  });
  afterAll(async () => {
    await app?.app.close();
    await store?.close();
  });

  it('answers a value the database cannot store with 400 on OTLP and on the JSON API alike', async () => {
    const dataError = () =>
      Promise.reject(
        Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), {
          code: '22021',
        }),
      );
    const pipeline = app.pipeline as unknown as Record<string, unknown>;
    const saved = { ingestSpans: pipeline.ingestSpans, context: pipeline.context };
    pipeline.ingestSpans = dataError;
    pipeline.context = dataError;
    try {
      const otlp = await app.app.inject({
        method: 'POST',
        url: '/v1/traces',
        headers: { 'content-type': 'application/json' },
        payload: jsonRequest([jsonSpan({})]),
      });
      expect(otlp.statusCode).toBe(400);
      expect(otlp.json()).toEqual({
        code: INVALID_ARGUMENT,
        message:
          'a value in this request cannot be stored: invalid byte sequence for encoding "UTF8": 0x00',
      });

      const api = await app.app.inject({
        method: 'POST',
        url: '/api/import',
        payload: { path: 'session.jsonl', text: '{}\n' },
      });
      expect(api.statusCode).toBe(400);
      expect(api.json()).toEqual({
        error: 'unstorable_value',
        message:
          'a value in this request cannot be stored: invalid byte sequence for encoding "UTF8": 0x00',
      });
    } finally {
      Object.assign(pipeline, saved);
    }
  });

  it('answers the real routes from the map', async () => {
    const proto = await app.app.inject({
      method: 'POST',
      url: '/v1/traces',
      headers: { 'content-type': 'application/x-protobuf' },
      payload: protobufRequest([jsonSpan({})]).subarray(0, 5),
    });
    expect(proto.statusCode).toBe(REFUSALS.undecodable.status);
    expect(decodeStatus(proto.rawPayload).code).toBe(REFUSALS.undecodable.rpc);

    const type = await app.app.inject({
      method: 'POST',
      url: '/v1/logs',
      headers: { 'content-type': 'text/plain' },
      payload: 'x',
    });
    expect(type.statusCode).toBe(REFUSALS.unsupported_media_type.status);
    expect(type.json().code).toBe(REFUSALS.unsupported_media_type.rpc);

    const missing = await app.app.inject({ method: 'GET', url: '/api/findings/123456' });
    expect(missing.statusCode).toBe(REFUSALS.not_found.status);
    expect(missing.json().error).toBe('not_found');

    const cursor = await app.app.inject({ method: 'GET', url: '/api/findings?cursor=nope' });
    expect(cursor.statusCode).toBe(REFUSALS.bad_request.status);
    expect(cursor.json().error).toBe('bad_request');

    const route = await app.app.inject({ method: 'GET', url: '/api/nothing-here' });
    expect(route.statusCode).toBe(REFUSALS.not_found.status);
    expect(route.json()).toEqual({ error: 'not_found', message: 'no route GET /api/nothing-here' });
  });
});
