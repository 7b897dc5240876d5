/**
 * One row per call, no raw span copy by default (issue 22), on both backends: a running rotscope
 * stores calls without `spans` rows, keeps each call's input messages with it (What was lost
 * reads them there), stores a re-sent batch once, and keeps raw spans only when asked to;
 * migration 0110 moves the messages of calls stored before out of their raw spans.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/store/db.ts';
import { loadMigrations, migrate } from '../../../src/store/migrate.ts';
import { ensureWorkspace } from '../../../src/store/workspaces.ts';
import { noteConversations } from '../../../src/store/conversations.ts';
import { hex, jsonRequest, jsonSpan } from '../../helpers/otlp-bodies.ts';
import { createTestDatabase, createTestStore } from '../../helpers/store.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const MESSAGES = JSON.stringify([
  { role: 'user', parts: [{ type: 'text', content: 'what did the build log say?' }] },
]);

function chatSpan(traceId: string, conversationId: string, i: number) {
  return jsonSpan({
    traceId,
    startNs: BigInt(Date.now()) * 1_000_000n + BigInt(i) * 1_000_000_000n,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.conversation.id': conversationId,
      'gen_ai.usage.input_tokens': 1_000 + i,
      'gen_ai.usage.output_tokens': 50,
      'gen_ai.input.messages': MESSAGES,
      'gen_ai.system_instructions': 'You are terse.',
      'http.url': 'https://example.invalid/not-a-message',
    },
  });
}

async function post(server: TestServer, body: unknown): Promise<number> {
  const response = await fetch(`${server.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return response.status;
}

describe('by default', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ loops: false });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('stores each call once with its messages, and no raw span', async () => {
    const traceId = hex(16);
    const request = jsonRequest([0, 1, 2].map((i) => chatSpan(traceId, 'conv-default', i)));
    expect(await post(server, request)).toBe(200);
    expect(await post(server, request)).toBe(200); // an exporter's retry
    const calls = await server.store.db
      .selectFrom('llm_calls')
      .select(['span_id', 'input_messages', 'context_tokens'])
      .where('trace_id', '=', traceId)
      .execute();
    expect(calls).toHaveLength(3);
    for (const call of calls) {
      // only the attributes What was lost reads: not the rest of the span
      expect(JSON.parse(call.input_messages!)).toEqual({
        'gen_ai.input.messages': MESSAGES,
        'gen_ai.system_instructions': 'You are terse.',
      });
    }
    const spans = await server.store.db
      .selectFrom('spans')
      .select('span_id')
      .where('trace_id', '=', traceId)
      .execute();
    expect(spans).toEqual([]);
    const conversation = await server.store.db
      .selectFrom('conversations')
      .select(['call_count', 'dirty'])
      .where('id', '=', 'conv-default')
      .executeTakeFirstOrThrow();
    expect(conversation).toEqual({ call_count: 3, dirty: true });
  });

  it('keeps no messages where the workspace does not capture content', async () => {
    // a server of its own: its pipeline reads the setting at the first batch
    const own = await startTestServer({ loops: false });
    try {
      await ensureWorkspace(own.store.db, 'default');
      await own.store.db
        .updateTable('workspaces')
        .set({ capture_content: false })
        .where('id', '=', 'default')
        .execute();
      const traceId = hex(16);
      expect(await post(own, jsonRequest([chatSpan(traceId, 'conv-private', 0)]))).toBe(200);
      const call = await own.store.db
        .selectFrom('llm_calls')
        .select('input_messages')
        .where('trace_id', '=', traceId)
        .executeTakeFirstOrThrow();
      expect(call.input_messages).toBeNull();
    } finally {
      await own.close();
    }
  });
});

describe('with ROTSCOPE_KEEP_RAW_SPANS', () => {
  it('also keeps each span as it arrived, once', async () => {
    const server = await startTestServer({ loops: false, config: { keepRawSpans: true } });
    try {
      const traceId = hex(16);
      const request = jsonRequest([0, 1].map((i) => chatSpan(traceId, 'conv-raw', i)));
      expect(await post(server, request)).toBe(200);
      expect(await post(server, request)).toBe(200);
      const spans = await server.store.db
        .selectFrom('spans')
        .select(['attributes'])
        .where('trace_id', '=', traceId)
        .execute();
      expect(spans).toHaveLength(2);
      expect(spans[0]!.attributes).toMatchObject({
        'http.url': 'https://example.invalid/not-a-message',
      });
    } finally {
      await server.close();
    }
  });
});

describe('one statement for the marks and the projects of a batch', () => {
  it('marks new items dirty and records a project without touching a conversation it only names', async () => {
    const store = await createTestStore();
    try {
      await ensureWorkspace(store.db, 'w');
      await noteConversations(store.db, 'w', [{ conversationId: 'a', fromNs: '50', calls: 2 }]);
      await store.db
        .updateTable('conversations')
        .set({ dirty: false })
        .where('id', '=', 'a')
        .execute();
      const before = await store.db
        .selectFrom('conversations')
        .select(['last_ingest_at', 'dirty_since'])
        .where('id', '=', 'a')
        .executeTakeFirstOrThrow();
      await noteConversations(
        store.db,
        'w',
        [{ conversationId: 'b', fromNs: '200', calls: 1 }],
        [
          { conversationId: 'a', project: '/repo/a', atNs: '10' },
          { conversationId: 'b', project: '/repo/b', atNs: '20' },
          { conversationId: 'c', project: '/repo/c', atNs: '30' },
        ],
      );
      const rows = await store.db
        .selectFrom('conversations')
        .select(['id', 'dirty', 'call_count', 'pending_from_ns', 'project', 'last_ingest_at'])
        .where('workspace_id', '=', 'w')
        .orderBy('id')
        .execute();
      expect(rows.map(({ last_ingest_at: _, ...r }) => r)).toEqual([
        { id: 'a', dirty: false, call_count: 2, pending_from_ns: '50', project: '/repo/a' },
        { id: 'b', dirty: true, call_count: 1, pending_from_ns: '200', project: '/repo/b' },
        { id: 'c', dirty: false, call_count: 0, pending_from_ns: null, project: '/repo/c' },
      ]);
      // naming a conversation's project is not an ingest of new items
      expect(rows[0]!.last_ingest_at).toEqual(before.last_ingest_at);
      // an older report does not overwrite a later one; a later one does
      await noteConversations(
        store.db,
        'w',
        [{ conversationId: 'a', fromNs: '40', calls: 1 }],
        [{ conversationId: 'a', project: '/old', atNs: '5' }],
      );
      await noteConversations(
        store.db,
        'w',
        [],
        [{ conversationId: 'b', project: '/new', atNs: '99' }],
      );
      const after = await store.db
        .selectFrom('conversations')
        .select(['id', 'dirty', 'call_count', 'pending_from_ns', 'project'])
        .where('id', 'in', ['a', 'b'])
        .orderBy('id')
        .execute();
      expect(after).toEqual([
        { id: 'a', dirty: true, call_count: 3, pending_from_ns: '40', project: '/repo/a' },
        { id: 'b', dirty: true, call_count: 1, pending_from_ns: '200', project: '/new' },
      ]);
    } finally {
      await store.close();
    }
  });
});

describe('migration 0110 on a store that kept raw spans', () => {
  it('moves each call’s messages out of its span and drops the run index', async () => {
    const url = await createTestDatabase();
    const store = await openStore({ databaseUrl: url, dataDir: 'memory://' });
    try {
      await migrate(
        store.db,
        loadMigrations().filter((m) => m.version < 110),
      );
      await ensureWorkspace(store.db, 'w');
      const span = (spanId: string, attributes: Record<string, unknown>) => ({
        workspace_id: 'w',
        trace_id: 't'.repeat(32),
        span_id: spanId,
        parent_span_id: null,
        name: 'chat',
        kind: 3,
        start_ns: '1000',
        end_ns: '2000',
        status_code: 0,
        status_message: '',
        scope_name: '',
        scope_version: '',
        attributes: JSON.stringify(attributes),
        events: '[]',
        links: '[]',
        resource: '{}',
        role: 'llm_call',
      });
      await store.db
        .insertInto('spans')
        .values([
          span('s1', {
            'gen_ai.input.messages': MESSAGES,
            'gen_ai.request.model': 'gpt-4o',
          }),
          span('s2', {
            'llm.input_messages.0.message.role': 'user',
            'llm.input_messages.0.message.content': 'hello',
            'llm.input_messages_count': 1,
          }),
          span('s3', { 'gen_ai.request.model': 'gpt-4o' }),
        ])
        .execute();
      const call = (spanId: string) => ({
        workspace_id: 'w',
        trace_id: 't'.repeat(32),
        span_id: spanId,
        conversation_id: 'c',
        conversation_synthetic: false,
        stream_key: 'c',
        run_id: 'c',
        start_ns: '1000',
        end_ns: '2000',
        producer: 'semconv',
        compacted: false,
      });
      await store.db
        .insertInto('llm_calls')
        .values([call('s1'), call('s2'), call('s3')] as never)
        .execute();
      await migrate(store.db, loadMigrations());
      const rows = (
        await store.db
          .selectFrom('llm_calls')
          .select(['span_id', 'input_messages'])
          .orderBy('span_id')
          .execute()
      ).map((r) => ({
        span_id: r.span_id,
        input_messages: r.input_messages === null ? null : JSON.parse(r.input_messages),
      }));
      expect(rows).toEqual([
        { span_id: 's1', input_messages: { 'gen_ai.input.messages': MESSAGES } },
        {
          span_id: 's2',
          input_messages: {
            'llm.input_messages.0.message.role': 'user',
            'llm.input_messages.0.message.content': 'hello',
          },
        },
        { span_id: 's3', input_messages: null },
      ]);
      const indexes = await store.db
        .selectFrom('pg_indexes' as never)
        .select('indexname' as never)
        .where('tablename' as never, '=', 'llm_calls' as never)
        .execute();
      expect(indexes.map((i) => (i as { indexname: string }).indexname)).not.toContain(
        'llm_calls_run_idx',
      );
    } finally {
      await store.close();
    }
  });
});
