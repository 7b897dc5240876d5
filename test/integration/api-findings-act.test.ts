/**
 * Acting on findings over real HTTP with real tokens (issue 37 §2, §3): findings carry their
 * conversation's project and filter on it exactly; acknowledging with a note (admin scope) and
 * the `acknowledged` filter; mutes (create, list, delete; bad ones refused with the reason); CSV
 * of findings and conversations, every page, filters applied, quoted as RFC 4180 says.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FindingDraft } from '../../src/model/findings.ts';
import { upsertFinding } from '../../src/store/findings.ts';
import { createToken } from '../../src/store/workspaces.ts';
import { hex, jsonRequest, jsonSpan } from '../helpers/otlp-bodies.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let admin: string;
let read: string;
let otherAdmin: string;

const ALPHA = '/srv/app/alpha-svc';
const BETA = 'https://github.com/acme/beta-svc.git';

/** Finding ids by name, made in beforeAll. */
const ids: Record<string, string> = {};

function draft(anchor: string, conversationId: string, extra: Partial<FindingDraft> = {}) {
  return {
    detector: 'output_cut_off',
    anchor,
    severity: 'warning',
    kind: null,
    conversationId,
    streamKey: conversationId,
    runId: `run-${conversationId}`,
    traceId: 'trace-1',
    spanId: `span-${anchor}`,
    model: 'claude-sonnet-4-5',
    summary: `Output cut off (${anchor})`,
    details: { outputTokens: 4096 },
    ...extra,
  } satisfies FindingDraft;
}

async function call(
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers, checked field by field
): Promise<{ status: number; type: string; text: string; body: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${options.token ?? admin}`,
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  return {
    status: response.status,
    type,
    text,
    body: type.startsWith('application/json') && text ? JSON.parse(text) : undefined,
  };
}

/** RFC 4180 CSV into rows of fields (quoted fields may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  if (field !== '' || row.length > 0) throw new Error(`CSV does not end with CRLF: ${text}`);
  return rows;
}

/** CSV rows as objects keyed by the header row. */
function csvRecords(text: string): Array<Record<string, string>> {
  const [header, ...rows] = parseCsv(text);
  if (!header) throw new Error('no header row');
  for (const row of rows) expect(row).toHaveLength(header.length);
  return rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i]!])));
}

/** Every finding id the JSON API lists with these filters, page by page. */
async function allIds(query: string): Promise<string[]> {
  const found: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await call(
      'GET',
      `/api/findings?${query}&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
    );
    expect(page.status).toBe(200);
    found.push(...page.body.items.map((f: { id: string }) => f.id));
    cursor = page.body.next;
  } while (cursor !== null);
  return found;
}

beforeAll(async () => {
  server = await startTestServer({ loops: false });
  const db = server.store.db;
  admin = (await createToken(db, 'default', 'admin')).token;
  read = (await createToken(db, 'default', 'read')).token;
  otherAdmin = (await createToken(db, 'other', 'admin')).token;
  await db
    .insertInto('conversations')
    .values([
      { workspace_id: 'default', id: 'conv-alpha', project: ALPHA },
      { workspace_id: 'default', id: 'conv-alpha-sub', project: `${ALPHA}/sub` },
      { workspace_id: 'default', id: 'conv-beta', project: BETA },
      { workspace_id: 'default', id: 'conv-none', project: null },
    ])
    .execute();
  const made: Array<[string, FindingDraft]> = [
    ['alpha1', draft('alpha1', 'conv-alpha')],
    ['alpha2', draft('alpha2', 'conv-alpha', { detector: 'history_lost' })],
    ['alphaSub', draft('alphaSub', 'conv-alpha-sub')],
    ['beta1', draft('beta1', 'conv-beta', { model: 'gpt-4.1' })],
    ['beta2', draft('beta2', 'conv-beta')],
    ['none', draft('none', 'conv-none')],
    ['noConversation', draft('noConversation', 'conv-unknown')],
    [
      'quoting',
      draft('quoting', 'conv-beta', {
        summary: 'Cut off: "Write", then a comma, and\na second line',
        details: { tool: 'Write', note: 'a, "b"' },
      }),
    ],
  ];
  for (const [name, finding] of made) ids[name] = (await upsertFinding(db, 'default', finding)).id;
  ids.otherWorkspace = (await upsertFinding(db, 'other', draft('x', 'conv-alpha'))).id;
}, 180_000);
afterAll(async () => {
  await server?.close();
});

describe('findings carry the project', () => {
  it("names each finding's conversation project, null when none is known", async () => {
    const one = await call('GET', `/api/findings/${ids.alpha1}`);
    expect(one.body).toMatchObject({ id: ids.alpha1, project: ALPHA, acknowledgedAt: null });
    expect((await call('GET', `/api/findings/${ids.beta1}`)).body.project).toBe(BETA);
    expect((await call('GET', `/api/findings/${ids.none}`)).body.project).toBeNull();
    expect((await call('GET', `/api/findings/${ids.noConversation}`)).body.project).toBeNull();
  });

  it('filters on the project exactly as stored: no prefix, no other workspace', async () => {
    const alpha = await allIds(`project=${encodeURIComponent(ALPHA)}`);
    expect(alpha.sort()).toEqual([ids.alpha1, ids.alpha2].sort());
    const beta = await allIds(`project=${encodeURIComponent(BETA)}`);
    expect(beta.sort()).toEqual([ids.beta1, ids.beta2, ids.quoting].sort());
    expect(await allIds(`project=${encodeURIComponent('/srv/app')}`)).toEqual([]);
    // combined with the other filters (AND)
    expect(await allIds(`project=${encodeURIComponent(ALPHA)}&detector=history_lost`)).toEqual([
      ids.alpha2,
    ]);
    // the project as SQL counts it
    const counted = await server.store.db
      .selectFrom('findings as f')
      .innerJoin('conversations as c', (j) =>
        j.onRef('c.workspace_id', '=', 'f.workspace_id').onRef('c.id', '=', 'f.conversation_id'),
      )
      .where('f.workspace_id', '=', 'default')
      .where('c.project', '=', BETA)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(counted.n)).toBe(beta.length);
  });

  it('refuses an empty project with the reason', async () => {
    const bad = await call('GET', '/api/findings?project=');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^querystring\/project /);
  });
});

describe('POST /api/findings/:id/acknowledge', () => {
  it('acknowledges with a note, filters on it, replaces the note, and takes it back', async () => {
    const before = await allIds('acknowledged=false');
    expect(before).toContain(ids.beta2);

    const acked = await call('POST', `/api/findings/${ids.beta2}/acknowledge`, {
      body: { note: '  known: the 4k output limit of this deployment  ' },
    });
    expect(acked.status).toBe(200);
    expect(acked.body).toMatchObject({
      id: ids.beta2,
      project: BETA,
      acknowledgedNote: 'known: the 4k output limit of this deployment',
    });
    const at = Date.parse(acked.body.acknowledgedAt);
    expect(Math.abs(at - Date.now())).toBeLessThan(60_000);
    expect((await call('GET', `/api/findings/${ids.beta2}`)).body).toEqual(acked.body);

    expect(await allIds('acknowledged=true')).toEqual([ids.beta2]);
    const notAcked = await allIds('acknowledged=false');
    expect(notAcked).not.toContain(ids.beta2);
    expect(notAcked.length).toBe(before.length - 1);
    expect(await allIds(`acknowledged=true&project=${encodeURIComponent(ALPHA)}`)).toEqual([]);

    const again = await call('POST', `/api/findings/${ids.beta2}/acknowledge`, {
      body: { note: 'raised the limit' },
    });
    expect(again.body.acknowledgedNote).toBe('raised the limit');
    expect(Date.parse(again.body.acknowledgedAt)).toBeGreaterThanOrEqual(at);

    const back = await call('DELETE', `/api/findings/${ids.beta2}/acknowledge`);
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ acknowledgedAt: null, acknowledgedNote: null });
    expect(await allIds('acknowledged=true')).toEqual([]);
  });

  it('answers 404 for a finding it does not have, 403 for a read token', async () => {
    for (const id of ['999999999', ids.otherWorkspace!, 'abc']) {
      const missing = await call('POST', `/api/findings/${id}/acknowledge`, {
        body: { note: 'x' },
      });
      expect(missing.status, id).toBe(404);
      expect(missing.body).toEqual({ error: 'not_found', message: `no finding "${id}"` });
    }
    expect(
      (await call('DELETE', '/api/findings/999999999/acknowledge', { token: admin })).status,
    ).toBe(404);
    const forbidden = await call('POST', `/api/findings/${ids.alpha1}/acknowledge`, {
      token: read,
      body: { note: 'x' },
    });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.message).toContain('needs "admin"');
    expect((await call('GET', `/api/findings/${ids.alpha1}`)).body.acknowledgedAt).toBeNull();
    // a read token reads the filter
    expect((await call('GET', '/api/findings?acknowledged=false', { token: read })).status).toBe(
      200,
    );
  });

  it('refuses bad input with the reason', async () => {
    const url = `/api/findings/${ids.alpha1}/acknowledge`;
    const empty = await call('POST', url, { body: { note: '   ' } });
    expect(empty.status).toBe(400);
    expect(empty.body.message).toBe('body/note say why: the note must not be empty');
    const none = await call('POST', url, { body: {} });
    expect(none.status).toBe(400);
    expect(none.body.message).toMatch(/^body\/note /);
    const long = await call('POST', url, { body: { note: 'x'.repeat(2001) } });
    expect(long.status).toBe(400);
    expect(long.body.message).toMatch(/^body\/note too big/);
    const extra = await call('POST', url, { body: { note: 'ok', by: 'me' } });
    expect(extra.status).toBe(400);
    expect(extra.body.message).toBe('body/by is not a known field');
    const flag = await call('GET', '/api/findings?acknowledged=yes');
    expect(flag.status).toBe(400);
    expect(flag.body.message).toMatch(/^querystring\/acknowledged .*"true".*"false"/);
    expect((await call('GET', `/api/findings/${ids.alpha1}`)).body.acknowledgedAt).toBeNull();
  });
});

describe('mutes', () => {
  it('creates, lists and deletes a mute', async () => {
    const until = new Date(Date.now() + 86_400_000).toISOString();
    const created = await call('POST', '/api/mutes', {
      body: { detector: 'history_lost', project: ALPHA, until, note: 'compactions we expect' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      detector: 'history_lost',
      project: ALPHA,
      model: null,
      until,
      note: 'compactions we expect',
      active: true,
    });
    const byModel = await call('POST', '/api/mutes', { body: { model: 'gpt-4.1' } });
    expect(byModel.status).toBe(201);
    expect(byModel.body).toMatchObject({ detector: null, project: null, until: null });

    const listed = await call('GET', '/api/mutes?limit=1', { token: read });
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((m: { id: string }) => m.id)).toEqual([byModel.body.id]);
    const rest = await call('GET', `/api/mutes?limit=1&cursor=${listed.body.next}`);
    expect(rest.body).toEqual({ items: [created.body], next: null });
    // another workspace sees none of them
    expect((await call('GET', '/api/mutes', { token: otherAdmin })).body.items).toEqual([]);
    expect(
      (await call('DELETE', `/api/mutes/${created.body.id}`, { token: otherAdmin })).status,
    ).toBe(404);

    expect((await call('DELETE', `/api/mutes/${created.body.id}`)).status).toBe(204);
    expect((await call('DELETE', `/api/mutes/${created.body.id}`)).status).toBe(404);
    expect((await call('DELETE', `/api/mutes/${byModel.body.id}`)).status).toBe(204);
    expect((await call('GET', '/api/mutes')).body.items).toEqual([]);
  });

  it('refuses bad mutes with the reason', async () => {
    const nothing = await call('POST', '/api/mutes', { body: { note: 'everything' } });
    expect(nothing.status).toBe(400);
    expect(nothing.body.message).toContain(
      'a mute must match on at least one of detector, project or model',
    );
    const empty = await call('POST', '/api/mutes', { body: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.message).toContain('at least one of detector, project or model');
    const detector = await call('POST', '/api/mutes', { body: { detector: 'context_rot' } });
    expect(detector.status).toBe(400);
    expect(detector.body.message).toMatch(/^body\/detector .*context_too_full/);
    const past = await call('POST', '/api/mutes', {
      body: { model: 'gpt-4.1', until: '2020-01-01T00:00:00Z' },
    });
    expect(past.status).toBe(400);
    expect(past.body.message).toBe(
      'body/until is in the past (2020-01-01T00:00:00.000Z): such a mute would match nothing',
    );
    const notTime = await call('POST', '/api/mutes', { body: { model: 'm', until: 'tomorrow' } });
    expect(notTime.status).toBe(400);
    expect(notTime.body.message).toMatch(/^body\/until /);
    const unknown = await call('POST', '/api/mutes', { body: { model: 'm', severity: 'info' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toBe('body/severity is not a known field');
    const badId = await call('DELETE', '/api/mutes/abc');
    expect(badId.status).toBe(400);
    expect(badId.body.message).toMatch(/^params\/id /);
    const forbidden = await call('POST', '/api/mutes', { token: read, body: { model: 'm' } });
    expect(forbidden.status).toBe(403);
    expect((await call('DELETE', '/api/mutes/1', { token: read })).status).toBe(403);
    expect((await call('GET', '/api/mutes')).body.items).toEqual([]);
  });
});

describe('CSV export', () => {
  it('answers every finding of every page with ?format=csv, in the JSON order', async () => {
    const json = await allIds('detector=output_cut_off');
    expect(json.length).toBeGreaterThan(4);
    const csv = await call('GET', '/api/findings?detector=output_cut_off&limit=2&format=csv');
    expect(csv.status).toBe(200);
    expect(csv.type).toBe('text/csv; charset=utf-8');
    const records = csvRecords(csv.text);
    expect(records.map((r) => r.id)).toEqual(json);
    expect(parseCsv(csv.text)[0]![0]).toBe('id');
    expect(records.every((r) => r.detector === 'output_cut_off')).toBe(true);
  });

  it('without a limit, reads the largest page at a time and still sends every page', async () => {
    const db = server.store.db;
    const bulk = (await createToken(db, 'bulk', 'read')).token;
    await sql`INSERT INTO findings (workspace_id, detector, anchor, severity, conversation_id,
        stream_key, run_id, trace_id, span_id, summary, created_at)
      SELECT 'bulk', 'output_cut_off', 'bulk-' || g, 'info', 'conv-' || (g % 7), 's', 'r', 't',
        's' || g, 'Output cut off, #' || g, now() - g * interval '1 millisecond'
      FROM generate_series(1, 450) g`.execute(db);
    const counted = await db
      .selectFrom('findings')
      .where('workspace_id', '=', 'bulk')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    const csv = await call('GET', '/api/findings?format=csv', { token: bulk });
    const records = csvRecords(csv.text);
    expect(records).toHaveLength(Number(counted.n));
    expect(new Set(records.map((r) => r.id)).size).toBe(450);
    expect(records.map((r) => r.summary).slice(0, 2)).toEqual([
      'Output cut off, #1',
      'Output cut off, #2',
    ]);
    expect(records.at(-1)!.summary).toBe('Output cut off, #450');
  });

  it('answers CSV for Accept: text/csv, filters applied, fields quoted and read back whole', async () => {
    const csv = await call('GET', `/api/findings?project=${encodeURIComponent(BETA)}&limit=1`, {
      headers: { accept: 'text/csv' },
    });
    expect(csv.type).toBe('text/csv; charset=utf-8');
    expect(csv.text).toContain('"Cut off: ""Write"", then a comma, and\na second line"');
    const records = csvRecords(csv.text);
    expect(records.map((r) => r.id).sort()).toEqual([ids.beta1, ids.beta2, ids.quoting].sort());
    const quoting = records.find((r) => r.id === ids.quoting)!;
    const api = (await call('GET', `/api/findings/${ids.quoting}`)).body;
    expect(quoting).toMatchObject({
      summary: api.summary,
      project: BETA,
      model: 'claude-sonnet-4-5',
      late: 'false',
      acknowledgedAt: '',
      createdAt: api.createdAt,
    });
    expect(JSON.parse(quoting.details!)).toEqual(api.details);
    // JSON stays the default, and wins when the client weighs it higher or asks for it
    expect((await call('GET', '/api/findings')).type).toMatch(/^application\/json/);
    const weighted = await call('GET', '/api/findings', {
      headers: { accept: 'application/json, text/csv;q=0.5' },
    });
    expect(weighted.type).toMatch(/^application\/json/);
    const asked = await call('GET', '/api/findings?format=json', {
      headers: { accept: 'text/csv' },
    });
    expect(asked.type).toMatch(/^application\/json/);
  });

  it('refuses a format it does not know, and bad filters, before any CSV', async () => {
    const bad = await call('GET', '/api/findings?format=xml');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^querystring\/format /);
    const flag = await call('GET', '/api/findings?acknowledged=1', {
      headers: { accept: 'text/csv' },
    });
    expect(flag.status).toBe(400);
    expect(flag.body.message).toMatch(/^querystring\/acknowledged /);
  });

  it('answers every conversation of every page as CSV, the search applied', async () => {
    const start = BigInt(Date.now() - 60_000) * 1_000_000n;
    const spans = ['csv-a', 'csv-b', 'csv-c', 'other-d'].map((id, i) =>
      jsonSpan({
        traceId: hex(16),
        name: 'chat claude-sonnet-4-5',
        startNs: start + BigInt(i) * 1_000_000_000n,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'claude-sonnet-4-5',
          'gen_ai.conversation.id': id,
          'gen_ai.usage.input_tokens': 1000 * (i + 1),
          'gen_ai.usage.output_tokens': 10,
          'process.working_directory': `/srv/app/${id}`,
        },
      }),
    );
    const sent = await fetch(`${server.url}/v1/traces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify(jsonRequest(spans)),
    });
    expect(sent.status).toBe(200);
    const json = await call('GET', '/api/conversations?q=csv-&limit=500');
    expect(json.body.items.map((c: { id: string }) => c.id)).toEqual(['csv-c', 'csv-b', 'csv-a']);

    const csv = await call('GET', '/api/conversations?q=csv-&limit=1&format=csv');
    expect(csv.status).toBe(200);
    expect(csv.type).toBe('text/csv; charset=utf-8');
    const records = csvRecords(csv.text);
    expect(records.map((r) => r.id)).toEqual(['csv-c', 'csv-b', 'csv-a']);
    expect(records[0]).toMatchObject({
      calls: '1',
      maxContextTokens: '3000',
      models: 'claude-sonnet-4-5',
      project: '/srv/app/csv-c',
    });
    // every field of the list is a column, those added later too (the reported cost: none here)
    expect(records[0]).toMatchObject({ costUsd: '' });
    const all = csvRecords(
      (await call('GET', '/api/conversations?limit=2', { headers: { accept: 'text/csv' } })).text,
    );
    expect(all.map((r) => r.id).sort()).toEqual(['csv-a', 'csv-b', 'csv-c', 'other-d']);
  });
});
