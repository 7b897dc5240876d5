/**
 * Token counts that cannot be stored exactly (negative, fractional, beyond 2^53) refuse their
 * span in partialSuccess, in JSON and protobuf alike; the other spans of the batch are stored.
 * Counts past 2^31 (up to 2^53) are stored exactly in the bigint columns (migration 0050) and
 * read back as the same numbers, never clamped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTimelinePage } from '../../../src/store/timeline.ts';
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
  // this test reads the raw spans, kept only with this setting (issue 22)
  server = await startTestServer({ loops: false, config: { keepRawSpans: true } });
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

  it('stores counts past 2^31 exactly, in protobuf (int64) and JSON (a string) alike', async () => {
    const big = 2 ** 31 + 12_345; // past int4
    const huge = 2 ** 53 - 1; // the largest a JavaScript number holds exactly
    const viaProtobuf = span(big, huge);
    const viaJson = span(big + 1, 7);
    for (const [body, type] of [
      [protobufRequest([viaProtobuf]), 'application/x-protobuf'],
      [JSON.stringify(jsonRequest([viaJson])), 'application/json'],
    ] as const) {
      const response = await post(`${server.url}/v1/traces`, body, { 'content-type': type });
      expect(response.status).toBe(200);
    }
    const rows = await server.store.db
      .selectFrom('llm_calls')
      .select(['span_id', 'conversation_id', 'input_tokens_raw', 'output_tokens'])
      .where('span_id', 'in', [viaProtobuf.spanId, viaJson.spanId])
      .execute();
    const bySpan = new Map(rows.map((row) => [row.span_id, row]));
    expect(bySpan.get(viaProtobuf.spanId)).toMatchObject({
      input_tokens_raw: String(big),
      output_tokens: String(huge),
    });
    expect(bySpan.get(viaJson.spanId)).toMatchObject({ input_tokens_raw: String(big + 1) });
    // What the detectors read: the same numbers.
    const { calls } = await loadTimelinePage(
      server.store.db,
      { workspaceId: 'default', conversationId: bySpan.get(viaProtobuf.spanId)!.conversation_id },
      null,
      1_000,
    );
    expect(calls.find((c) => c.spanId === viaProtobuf.spanId)).toMatchObject({
      inputTokensRaw: big,
      outputTokens: huge,
    });
  });
});
