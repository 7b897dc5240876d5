/** Tokens: missing or wrong → 401, wrong scope → 403, and a workspace never sees another's data. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../../src/store/workspaces.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import {
  decodeStatus,
  hex,
  jsonRequest,
  jsonSpan,
  post,
  protobufRequest,
} from '../../helpers/otlp-bodies.ts';

let server: TestServer;
let ingestA: string;
let readA: string;
let readB: string;
let adminB: string;

beforeAll(async () => {
  // this test reads the raw spans, kept only with this setting (issue 22)
  server = await startTestServer({ loops: false, config: { keepRawSpans: true } });
  ingestA = (await createToken(server.store.db, 'team-a', 'ingest')).token;
  readA = (await createToken(server.store.db, 'team-a', 'read')).token;
  readB = (await createToken(server.store.db, 'team-b', 'read')).token;
  adminB = (await createToken(server.store.db, 'team-b', 'admin')).token;
});
afterAll(async () => {
  await server?.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('auth', () => {
  it('refuses a missing token once tokens exist, with a google.rpc.Status body', async () => {
    const response = await post(`${server.url}/v1/traces`, protobufRequest([jsonSpan()]), {
      'content-type': 'application/x-protobuf',
    });
    expect(response.status).toBe(401);
    expect(decodeStatus(response.body)).toMatchObject({
      code: 16,
      message: 'missing bearer token',
    });
  });

  it('refuses an unknown token and a malformed header', async () => {
    const body = JSON.stringify(jsonRequest([jsonSpan()]));
    const wrong = await post(`${server.url}/v1/traces`, body, {
      'content-type': 'application/json',
      ...bearer('rs_nope'),
    });
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.body.toString())).toEqual({
      code: 16,
      message: 'unknown or revoked token',
    });
    const basic = await post(`${server.url}/v1/traces`, body, {
      'content-type': 'application/json',
      authorization: 'Basic dXNlcjpwYXNz',
    });
    expect(basic.status).toBe(401);
  });

  it('refuses a read token on the ingest route and an ingest token on the API (403)', async () => {
    const body = JSON.stringify(jsonRequest([jsonSpan()]));
    const readOnIngest = await post(`${server.url}/v1/traces`, body, {
      'content-type': 'application/json',
      ...bearer(readA),
    });
    expect(readOnIngest.status).toBe(403);
    expect(JSON.parse(readOnIngest.body.toString()).message).toBe(
      'this token has scope "read"; this route needs "ingest"',
    );
    const ingestOnApi = await fetch(`${server.url}/api/conversations`, {
      headers: bearer(ingestA),
    });
    expect(ingestOnApi.status).toBe(403);
  });

  it("stores spans in the token's workspace; another workspace cannot read them", async () => {
    const traceId = hex(16);
    const response = await post(
      `${server.url}/v1/traces`,
      JSON.stringify(
        jsonRequest([
          jsonSpan({
            traceId,
            attributes: {
              'gen_ai.operation.name': 'chat',
              'gen_ai.request.model': 'gpt-4o',
              'gen_ai.conversation.id': 'secret-conv',
              'gen_ai.usage.input_tokens': 5000,
              'gen_ai.usage.output_tokens': 10,
            },
          }),
        ]),
      ),
      { 'content-type': 'application/json', ...bearer(ingestA) },
    );
    expect(response.status).toBe(200);
    const rows = await server.store.db
      .selectFrom('spans')
      .select('workspace_id')
      .where('trace_id', '=', traceId)
      .execute();
    expect(rows).toEqual([{ workspace_id: 'team-a' }]);

    const asA = (await (
      await fetch(`${server.url}/api/conversations`, { headers: bearer(readA) })
    ).json()) as {
      items: Array<{ id: string }>;
    };
    expect(asA.items.map((c) => c.id)).toContain('secret-conv');
    for (const token of [readB, adminB]) {
      const asB = (await (
        await fetch(`${server.url}/api/conversations`, { headers: bearer(token) })
      ).json()) as {
        items: unknown[];
      };
      expect(asB.items).toEqual([]);
      const one = await fetch(`${server.url}/api/conversations/secret-conv`, {
        headers: bearer(token),
      });
      expect(one.status).toBe(404);
    }
  });
});
