/**
 * A webhook URL with credentials or a token in its query is masked on every read of the API,
 * is not stored in clear, and still reaches its destination whole (also after a PATCH that
 * sends the masked URL back).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpReceiver, type HttpReceiver } from '../../helpers/http-receiver.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let server: TestServer;
let receiver: HttpReceiver;
beforeAll(async () => {
  server = await startTestServer({ loops: false, config: { allowPrivateAddresses: true } });
  receiver = await startHttpReceiver();
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

async function call(method: string, url: string, body?: unknown) {
  const response = await fetch(`${server.url}${url}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON read in tests
}

describe('webhook URL masking', () => {
  it('masks on create, get, list and patch, and sends to the whole URL', async () => {
    const token = 'Zq8tokenValue2xY9';
    const whole = `${receiver.url.replace('http://', 'http://bot:hunter2@')}/hook?token=${token}&team=ops`;
    const masked = `${receiver.url.replace('http://', 'http://***:***@')}/hook?token=***&team=ops`;
    const created = await call('POST', '/api/channels', {
      type: 'webhook',
      name: 'masked',
      config: { url: whole },
    });
    expect(created.status).toBe(201);
    expect(created.body.config.url).toBe(masked);
    const id = created.body.id as string;
    expect((await call('GET', `/api/channels/${id}`)).body.config.url).toBe(masked);
    const listed = await call('GET', '/api/channels');
    expect(listed.body.items.map((c: { config: { url: string } }) => c.config.url)).toEqual([
      masked,
    ]);

    // What GET returned, sent back with a new name, keeps the whole URL.
    const current = (await call('GET', `/api/channels/${id}`)).body;
    const patched = await call('PATCH', `/api/channels/${id}`, { ...current, name: 'renamed' });
    expect(patched.status).toBe(200);
    expect(patched.body.config.url).toBe(masked);

    const tested = await call('POST', `/api/channels/${id}/test`);
    expect(tested.body).toMatchObject({ ok: true });
    const [request] = await receiver.waitFor(1);
    expect(request!.path).toBe(`/hook?token=${token}&team=ops`);
    expect(request!.headers.authorization).toBe(
      `Basic ${Buffer.from('bot:hunter2').toString('base64')}`,
    );

    // Not in clear in any column.
    const rows = await sql<{ row: string }>`SELECT channels::text AS row FROM channels`.execute(
      server.store.db,
    );
    expect(rows.rows.length).toBe(1);
    expect(rows.rows[0]!.row).not.toContain(token);
    expect(rows.rows[0]!.row).not.toContain('hunter2');
  });

  it('masks URLs stored whole by older versions on read', async () => {
    const legacyUrl = `${receiver.url}/legacy?access_token=Old5tokenValue9xyz`;
    const row = await server.store.db
      .insertInto('channels')
      .values({
        workspace_id: 'default',
        type: 'webhook',
        name: 'legacy',
        config: JSON.stringify({ url: legacyUrl, headerNames: [] }),
        secrets: JSON.stringify({ secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}` }),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const read = await call('GET', `/api/channels/${row.id}`);
    expect(read.body.config.url).toBe(`${receiver.url}/legacy?access_token=***`);
  });
});
