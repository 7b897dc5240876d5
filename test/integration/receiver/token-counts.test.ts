/**
 * Token counts that cannot be stored exactly (negative, fractional, beyond 2^53) refuse their
 * span in partialSuccess, in JSON and protobuf alike; the other spans of the batch are stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import {
  decodeExportResponse,
  jsonRequest,
  jsonSpan,
  post,
  protobufRequest,
} from '../../helpers/otlp-bodies.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ loops: false });
});
afterAll(async () => server?.close());

const span = (input: number, output: number) =>
  jsonSpan({
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.usage.input_tokens': input,
      'gen_ai.usage.output_tokens': output,
    },
  });

async function storedSpans(ids: string[]): Promise<number> {
  const rows = await server.store.db
    .selectFrom('spans')
    .select('span_id')
    .where('span_id', 'in', ids)
    .execute();
  return rows.length;
}

describe('token counts', () => {
  it('refuses spans with negative or out-of-range counts in JSON, storing the rest', async () => {
    const spans = [span(1200, 80), span(-5, 80), span(1200, 1e30)];
    const response = await post(`${server.url}/v1/traces`, JSON.stringify(jsonRequest(spans)), {
      'content-type': 'application/json',
    });
    expect(response.status).toBe(200);
    const body = JSON.parse(response.body.toString());
    expect(body.partialSuccess.rejectedSpans).toBe('2');
    expect(body.partialSuccess.errorMessage).toMatch(/2 invalid_attribute.*input token count -5/);
    expect(await storedSpans(spans.map((s) => s.spanId))).toBe(1);
  });

  it('does the same in protobuf', async () => {
    const spans = [span(1200, 80), span(-5, 80)];
    const response = await post(`${server.url}/v1/traces`, protobufRequest(spans), {
      'content-type': 'application/x-protobuf',
    });
    expect(response.status).toBe(200);
    expect(decodeExportResponse(response.body)).toMatchObject({
      partialSuccess: { rejectedSpans: 1 },
    });
    expect(await storedSpans(spans.map((s) => s.spanId))).toBe(1);
  });
});
