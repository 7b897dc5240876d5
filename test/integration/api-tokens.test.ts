/**
 * The tokens API over real HTTP: create with a name, list (never the token), revoke; a token
 * acts on its own workspace only, a console session as much as a bearer token; a read token
 * cannot reach any of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../src/store/workspaces.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let adminA: string;
let readA: string;
let adminB: string;

beforeAll(async () => {
  server = await startTestServer({ loops: false });
  adminA = (await createToken(server.store.db, 'team-a', 'admin')).token;
  readA = (await createToken(server.store.db, 'team-a', 'read')).token;
  adminB = (await createToken(server.store.db, 'team-b', 'admin')).token;
});
afterAll(async () => {
  await server?.close();
});

async function call(
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers, checked field by field
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

describe('tokens API', () => {
  it('creates a named token, lists it without the token itself, and revokes it', async () => {
    const created = await call('POST', '/api/tokens', {
      token: adminA,
      body: { scope: 'ingest', name: 'ci ingest' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ workspace: 'team-a', scope: 'ingest', name: 'ci ingest' });
    const secret: string = created.body.token;

    const listed = await call('GET', '/api/tokens', { token: adminA });
    expect(listed.status).toBe(200);
    const mine = listed.body.items.find((t: { id: string }) => t.id === created.body.id);
    expect(mine).toMatchObject({
      name: 'ci ingest',
      workspace: 'team-a',
      scope: 'ingest',
      prefix: secret.slice(0, 12),
      revokedAt: null,
    });
    // the listing never carries a token or its hash
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    expect(JSON.stringify(listed.body)).not.toContain(secret.slice(12));
    expect(Object.keys(mine).sort()).toEqual(
      ['createdAt', 'id', 'name', 'prefix', 'revokedAt', 'scope', 'workspace'].sort(),
    );
    // only team-a's tokens
    expect(new Set(listed.body.items.map((t: { workspace: string }) => t.workspace))).toEqual(
      new Set(['team-a']),
    );

    const ingest = () =>
      fetch(`${server.url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
        body: JSON.stringify({ resourceSpans: [] }),
      });
    // Used first, so the server has it cached: the revoke must still take effect at once.
    expect((await ingest()).status).toBe(200);
    const revoked = await call('POST', `/api/tokens/${created.body.id}/revoke`, { token: adminA });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
    expect((await ingest()).status).toBe(401);

    // revoking again keeps the first time; the default listing leaves it out, --all shows it
    const again = await call('POST', `/api/tokens/${created.body.id}/revoke`, { token: adminA });
    expect(again.body.revokedAt).toBe(revoked.body.revokedAt);
    const active = await call('GET', '/api/tokens', { token: adminA });
    expect(active.body.items.some((t: { id: string }) => t.id === created.body.id)).toBe(false);
    const all = await call('GET', '/api/tokens?includeRevoked=true', { token: adminA });
    expect(all.body.items.find((t: { id: string }) => t.id === created.body.id)).toMatchObject({
      revokedAt: revoked.body.revokedAt,
    });
  });

  it("keeps a token to its own workspace: another workspace's token is not found, its listing forbidden", async () => {
    const other = await call('POST', '/api/tokens', {
      token: adminB,
      body: { scope: 'read', name: 'b reader' },
    });
    expect(other.status).toBe(201);
    expect(
      (await call('POST', `/api/tokens/${other.body.id}/revoke`, { token: adminA })).status,
    ).toBe(404);
    expect((await call('GET', '/api/tokens?workspace=team-b', { token: adminA })).status).toBe(403);
    const stillThere = await call('GET', '/api/tokens', { token: adminB });
    expect(stillThere.body.items.find((t: { id: string }) => t.id === other.body.id)).toMatchObject(
      {
        revokedAt: null,
      },
    );
  });

  it('refuses a read token every tokens route', async () => {
    expect((await call('GET', '/api/tokens', { token: readA })).status).toBe(403);
    expect(
      (await call('POST', '/api/tokens', { token: readA, body: { scope: 'admin' } })).status,
    ).toBe(403);
    expect((await call('POST', '/api/tokens/1/revoke', { token: readA })).status).toBe(403);
  });

  it('keeps a console session to its own workspace too (it is no first-run bootstrap)', async () => {
    const signIn = await fetch(`${server.url}/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: adminA }),
    });
    expect(signIn.status).toBe(200);
    const { csrfToken } = (await signIn.json()) as { csrfToken: string };
    const cookie = signIn.headers
      .getSetCookie()
      .map((line) => line.split(';')[0])
      .join('; ');
    const headers = { cookie, 'x-csrf-token': csrfToken };
    const foreign = await call('POST', '/api/tokens', {
      headers,
      body: { scope: 'admin', workspace: 'team-b' },
    });
    expect(foreign.status).toBe(403);
    const own = await call('POST', '/api/tokens', { headers, body: { scope: 'read' } });
    expect(own.status).toBe(201);
    expect(own.body.workspace).toBe('team-a');
    const listed = await call('GET', '/api/tokens?includeRevoked=true', { headers });
    expect(new Set(listed.body.items.map((t: { workspace: string }) => t.workspace))).toEqual(
      new Set(['team-a']),
    );
  });
});
