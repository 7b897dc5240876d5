/** Property test through the real handler: random and mutated bodies never get a 500 and never crash it. */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { jsonRequest, jsonSpan, protobufRequest } from '../../helpers/otlp-bodies.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ loops: false });
});
afterAll(async () => {
  await server?.close();
});

const validProto = protobufRequest([jsonSpan(), jsonSpan()]);
const validJson = Buffer.from(JSON.stringify(jsonRequest([jsonSpan()])));

const bodies = fc.oneof(
  fc.uint8Array({ maxLength: 1024 }),
  fc
    .tuple(fc.nat({ max: validProto.length - 1 }), fc.integer({ min: 1, max: 255 }))
    .map(([at, xor]) => {
      const copy = Buffer.from(validProto);
      copy[at] = copy[at]! ^ xor;
      return new Uint8Array(copy);
    }),
  fc
    .tuple(fc.nat({ max: validJson.length - 1 }), fc.integer({ min: 1, max: 255 }))
    .map(([at, xor]) => {
      const copy = Buffer.from(validJson);
      copy[at] = copy[at]! ^ xor;
      return new Uint8Array(copy);
    }),
);

describe('the /v1/traces and /v1/logs handlers', () => {
  it('answer 200, 400 or 415 to any body, never 500', async () => {
    await fc.assert(
      fc.asyncProperty(
        bodies,
        fc.constantFrom(
          'application/x-protobuf',
          'application/json',
          'application/json; charset=utf-8',
        ),
        fc.constantFrom('/v1/traces', '/v1/logs'),
        async (body, contentType, path) => {
          const response = await server.app.app.inject({
            method: 'POST',
            url: path,
            headers: { 'content-type': contentType },
            payload: Buffer.from(body),
          });
          expect([200, 400]).toContain(response.statusCode);
        },
      ),
      { numRuns: 300 },
    );
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
