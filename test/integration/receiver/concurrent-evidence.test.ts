/**
 * A call's span and the log records that carry its content arrive from two exporters, often at
 * the same moment. Whichever transaction commits second must see the other's rows: on
 * PostgreSQL (concurrent READ COMMITTED transactions) each used to look before the other had
 * committed, and the content was never folded into the call. PGlite runs one transaction at a
 * time, so this can only fail on PostgreSQL; it runs on both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestPipeline } from '../../../src/receiver/pipeline.ts';
import { ensureWorkspace } from '../../../src/store/workspaces.ts';
import { genAiChatAttributes } from '../../helpers/otel.ts';
import { createTestStore, type TestStore } from '../../helpers/store.ts';
import { log, span } from '../../unit/ingest/helpers.ts';

const PAIRS = 40;
const CONTENT_SCOPE = { name: '@opentelemetry/instrumentation-openai', version: '0.21.0' };

function pair(i: number) {
  const traceId = (i + 1).toString(16).padStart(32, 'c');
  const spanId = (i + 1).toString(16).padStart(16, 'd');
  const call = span({
    traceId,
    spanId,
    name: 'chat claude-sonnet-4-5',
    kind: 3,
    attributes: genAiChatAttributes(i, `conv-${i}`),
  });
  const content = [
    log({
      traceId,
      spanId,
      scope: CONTENT_SCOPE,
      eventName: 'gen_ai.user.message',
      body: { content: 'hi' },
    }),
    log({
      traceId,
      spanId,
      scope: CONTENT_SCOPE,
      eventName: 'gen_ai.tool.message',
      body: { id: 'call_1', content: 'x'.repeat(400) },
    }),
  ];
  return { call, content, traceId, spanId };
}

describe('a span and its content logs committed at the same time', () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await createTestStore();
    await ensureWorkspace(store.db, 'ws');
  });
  afterAll(() => store.close());

  it('fold the content into the call whichever commits first', async () => {
    const pipeline = new IngestPipeline(store);
    const pairs = Array.from({ length: PAIRS }, (_, i) => pair(i));
    await Promise.all(
      pairs.flatMap(({ call, content }) => [
        pipeline.ingestSpans('ws', [call]),
        pipeline.ingestLogs('ws', content),
      ]),
    );
    const rows = await store.db
      .selectFrom('llm_calls')
      .select(['trace_id', 'parts'])
      .where('workspace_id', '=', 'ws')
      .execute();
    expect(rows).toHaveLength(PAIRS);
    const withoutParts = rows.filter((row) => row.parts === null).map((row) => row.trace_id);
    expect(withoutParts).toEqual([]);
  });
});
