/**
 * Where a conversation runs, stored and listed (issue 23 §5): projects reported by spans
 * (`process.working_directory` / `vcs.repository.url.full` on a call's resource, the hook's
 * `rotscope.session` span) POSTed to a running rotscope's /v1/traces, and by session files (a
 * Claude Code transcript's `cwd`, a Codex session's `session_meta`) through the import's path
 * (IngestPipeline.ingestNormalized); then `GET /api/conversations` (with `q=`) and
 * `GET /api/conversations/:id`, listConversations and noteConversations (projects) / projectsOf on the store
 * itself. The latest report wins by when it was made, not by when it arrived. On PGlite, or on
 * PostgreSQL with DATABASE_URL.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionSpan } from '../../../src/cli/hook-otlp.ts';
import { normalizeCodexSession } from '../../../src/ingest/codex-sessions.ts';
import { normalizeTranscript } from '../../../src/ingest/index.ts';
import { IngestPipeline } from '../../../src/receiver/pipeline.ts';
import { listConversations } from '../../../src/store/browse.ts';
import { noteConversations, projectsOf } from '../../../src/store/conversations.ts';
import { ensureWorkspace } from '../../../src/store/workspaces.ts';
import { jsonRequest, jsonSpan } from '../../helpers/otlp-bodies.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const REAL = join(import.meta.dirname, '../../fixtures/real');
const WS = 'default';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ loops: false });
}, 120_000);
afterAll(async () => {
  await server?.close();
});

/** Milliseconds since the epoch as OTLP's decimal nanoseconds. */
const ns = (ms: number) => `${BigInt(ms) * 1_000_000n}`;
const BASE_MS = Date.UTC(2026, 10, 1, 12, 0, 0);

let spanCounter = 0;
/** One GenAI chat call of `conversationId` as OTLP/HTTP JSON, its resource's attributes given. */
function chatBody(
  conversationId: string,
  startMs: number,
  resource: Record<string, string> = {},
): unknown {
  spanCounter++;
  const span = jsonSpan({
    traceId: spanCounter.toString(16).padStart(32, 'e'),
    spanId: spanCounter.toString(16).padStart(16, '0'),
    startNs: BigInt(startMs) * 1_000_000n,
    durationNs: 500_000_000n,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.conversation.id': conversationId,
      'gen_ai.usage.input_tokens': 1_000,
      'gen_ai.usage.output_tokens': 20,
    },
  });
  return jsonRequest(
    [span],
    { 'service.name': 'agent-app', ...resource },
    'conversation-projects-test',
  );
}

async function postTraces(body: unknown): Promise<void> {
  const res = await fetch(`${server.url}/v1/traces`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

interface Summary {
  id: string;
  project: string | null;
}

async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(`${server.url}${path}`);
  expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
  return (await res.json()) as T;
}

/** Every conversation id `GET /api/conversations?q=` lists, page by page. */
async function searched(q: string, limit = 500): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 20; page++) {
    const query = new URLSearchParams({ q, limit: String(limit) });
    if (cursor !== null) query.set('cursor', cursor);
    const body: { items: Summary[]; next: string | null } = await getJson(
      `/api/conversations?${query}`,
    );
    ids.push(...body.items.map((item) => item.id));
    cursor = body.next;
    if (cursor === null) return ids;
  }
  throw new Error(`q=${q}: still a next page after 20 pages (${ids.join(', ')})`);
}

const listed = async (): Promise<Map<string, string | null>> => {
  const body = await getJson<{ items: Summary[] }>('/api/conversations?limit=500');
  return new Map(body.items.map((item) => [item.id, item.project]));
};
const projectOfConversation = async (id: string): Promise<string | null> =>
  (await getJson<{ project: string | null }>(`/api/conversations/${encodeURIComponent(id)}`))
    .project;

/** The stored project row of a conversation. */
const row = (workspaceId: string, id: string) =>
  server.store.db
    .selectFrom('conversations')
    .select(['project', 'project_at_ns', 'dirty'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();

describe('projects sent on spans (POST /v1/traces)', () => {
  it('a call whose resource carries process.working_directory: GET /api/conversations and /:id give it; one without has null', async () => {
    await postTraces(
      chatBody('conv-payments', BASE_MS, {
        'process.working_directory': '/home/dev/src/acme/payments-api',
      }),
    );
    await postTraces(chatBody('conv-plain', BASE_MS + 1_000));
    const projects = await listed();
    expect(projects.get('conv-payments')).toBe('/home/dev/src/acme/payments-api');
    expect(projects.get('conv-plain')).toBeNull();
    expect(await projectOfConversation('conv-payments')).toBe('/home/dev/src/acme/payments-api');
    expect(await projectOfConversation('conv-plain')).toBeNull();
  });

  it('the repository before the directory', async () => {
    await postTraces(
      chatBody('conv-repo', BASE_MS + 2_000, {
        'process.working_directory': '/tmp/checkout-123',
        'vcs.repository.url.full': 'https://github.com/acme/ledger',
      }),
    );
    expect((await listed()).get('conv-repo')).toBe('https://github.com/acme/ledger');
  });

  it("the hook's rotscope.session span: a later report wins; an earlier one arriving late does not overwrite", async () => {
    const session = 'hook-session-0001';
    await postTraces(chatBody(session, BASE_MS + 3_000));
    expect(await projectOfConversation(session)).toBeNull();

    await postTraces(sessionSpan({ sessionId: session, cwd: '/work/first', atMs: BASE_MS + 10 }));
    expect((await listed()).get(session)).toBe('/work/first');

    // resumed in another directory, later
    await postTraces(sessionSpan({ sessionId: session, cwd: '/work/second', atMs: BASE_MS + 20 }));
    expect((await listed()).get(session)).toBe('/work/second');
    expect(await projectOfConversation(session)).toBe('/work/second');

    // a report made before both, delivered only now (a hook's `unsent/` span sent late)
    await postTraces(sessionSpan({ sessionId: session, cwd: '/work/stale', atMs: BASE_MS + 5 }));
    expect((await listed()).get(session)).toBe('/work/second');
    expect(await projectOfConversation(session)).toBe('/work/second');
    expect(await row(WS, session)).toMatchObject({
      project: '/work/second',
      project_at_ns: ns(BASE_MS + 20),
    });

    // the same span again (a resumed session sends it again): stored once, nothing changes
    await postTraces(sessionSpan({ sessionId: session, cwd: '/work/second', atMs: BASE_MS + 20 }));
    expect(await projectOfConversation(session)).toBe('/work/second');
  });

  it('a session span before any call: the conversation is listed with it once its calls come', async () => {
    const session = 'hook-session-early';
    await postTraces(sessionSpan({ sessionId: session, cwd: '/work/early', atMs: BASE_MS }));
    expect((await listed()).has(session)).toBe(false);
    expect(await row(WS, session)).toMatchObject({ project: '/work/early', dirty: false });
    await postTraces(chatBody(session, BASE_MS + 4_000));
    expect((await listed()).get(session)).toBe('/work/early');
  });
});

describe('projects from session files (the import path)', () => {
  it('a Claude Code transcript: its cwd', async () => {
    const pipeline = new IngestPipeline(server.store);
    const text = readFileSync(join(REAL, 'claude-code-2.1.332/reread/transcript.jsonl'), 'utf8');
    await pipeline.ingestNormalized(WS, normalizeTranscript(text, await pipeline.context(WS)));
    const id = '843c48b1-ad59-49b1-80f8-fb9e02b8b6f6';
    expect((await listed()).get(id)).toBe('/tmp/cc-run-toolsearch.n1lueo/work');
    expect(await projectOfConversation(id)).toBe('/tmp/cc-run-toolsearch.n1lueo/work');
  });

  it("a Codex session file: session_meta's cwd", async () => {
    const dir = join(REAL, 'codex-0.171.0/healthy');
    const file = readdirSync(dir).find((f) => f.startsWith('rollout-'))!;
    const text = brotliDecompressSync(readFileSync(join(dir, file))).toString('utf8');
    const pipeline = new IngestPipeline(server.store);
    await pipeline.ingestNormalized(
      WS,
      normalizeCodexSession(text, await pipeline.context(WS), join(dir, file.slice(0, -3))),
    );
    expect((await listed()).get('01a2358b-6a53-72b2-b9fe-ba6f2e3e1de2')).toBe(
      '/tmp/rotscope-codex-3Tw2UQ/work',
    );
  });
});

describe('GET /api/conversations?q= matches the project', () => {
  beforeAll(async () => {
    for (const [i, [id, project]] of [
      ['search-one', '/home/dev/src/zephyr/backend'],
      ['search-two', 'https://github.com/zephyr/frontend.git'],
      ['search-three', '/home/dev/src/unrelated'],
    ].entries())
      await postTraces(
        chatBody(id!, BASE_MS + 100_000 + i * 1_000, { 'process.working_directory': project! }),
      );
  });

  it('part of the project finds the conversation, case-insensitively', async () => {
    expect(await searched('zephyr/backend')).toEqual(['search-one']);
    expect((await searched('ZEPHYR')).sort()).toEqual(['search-one', 'search-two']);
    expect(await searched('frontend.git')).toEqual(['search-two']);
    expect(await searched('no-such-project-anywhere')).toEqual([]);
    // the id still matches as before
    expect(await searched('search-three')).toEqual(['search-three']);
  });

  it('pages of a search by project hold each match once, and end', async () => {
    expect((await searched('zephyr', 1)).sort()).toEqual(['search-one', 'search-two']);
  });
});

describe('on the store: noteConversations (projects), projectsOf, listConversations', () => {
  const OTHER_WS = 'projects-other';
  beforeAll(async () => {
    await ensureWorkspace(server.store.db, OTHER_WS);
  });

  it('the latest report by time wins, whatever the order of arrival; equal times: the later call', async () => {
    const db = server.store.db;
    await noteConversations(
      db,
      OTHER_WS,
      [],
      [{ conversationId: 'n1', project: '/b', atNs: '200' }],
    );
    await noteConversations(
      db,
      OTHER_WS,
      [],
      [{ conversationId: 'n1', project: '/a', atNs: '100' }],
    );
    expect(await row(OTHER_WS, 'n1')).toMatchObject({ project: '/b', project_at_ns: '200' });
    await noteConversations(
      db,
      OTHER_WS,
      [],
      [{ conversationId: 'n1', project: '/c', atNs: '300' }],
    );
    expect(await row(OTHER_WS, 'n1')).toMatchObject({ project: '/c', project_at_ns: '300' });
    await noteConversations(
      db,
      OTHER_WS,
      [],
      [{ conversationId: 'n1', project: '/d', atNs: '300' }],
    );
    expect(await row(OTHER_WS, 'n1')).toMatchObject({ project: '/d', project_at_ns: '300' });
    // several reports of one conversation in one batch: its latest; bigint order, not text
    await noteConversations(
      db,
      OTHER_WS,
      [],
      [
        { conversationId: 'n2', project: '/ten', atNs: '1000' },
        { conversationId: 'n2', project: '/nine', atNs: '999' },
        { conversationId: 'n3', project: '/n3', atNs: '5' },
      ],
    );
    expect(await projectsOf(db, OTHER_WS, ['n1', 'n2', 'n3', 'absent'])).toEqual(
      new Map([
        ['n1', '/d'],
        ['n2', '/ten'],
        ['n3', '/n3'],
      ]),
    );
    expect(await projectsOf(db, OTHER_WS, [])).toEqual(new Map());
    await noteConversations(db, OTHER_WS, [], []);
  });

  it('keeps a conversation that has work to evaluate dirty', async () => {
    const db = server.store.db;
    await db
      .insertInto('conversations')
      .values({ workspace_id: OTHER_WS, id: 'dirty-one', dirty: true })
      .execute();
    await noteConversations(
      db,
      OTHER_WS,
      [],
      [{ conversationId: 'dirty-one', project: '/x', atNs: '1' }],
    );
    expect(await row(OTHER_WS, 'dirty-one')).toMatchObject({ project: '/x', dirty: true });
  });

  it("a search by project stays in its workspace; the list gives each workspace's own project", async () => {
    const db = server.store.db;
    // conv-plain (default workspace, no project there) has a project in the other workspace
    await noteConversations(
      db,
      OTHER_WS,
      [],
      [{ conversationId: 'conv-plain', project: '/secret/quokka', atNs: '1' }],
    );
    const found = await listConversations(db, WS, { limit: 50, search: 'quokka' });
    expect(found.items).toEqual([]);
    const all = await listConversations(db, WS, { limit: 500 });
    expect(all.items.find((item) => item.id === 'conv-plain')?.project).toBeNull();
    expect(all.items.find((item) => item.id === 'conv-payments')?.project).toBe(
      '/home/dev/src/acme/payments-api',
    );
  });
});
