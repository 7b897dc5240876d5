/**
 * /metrics and /api/openapi.json follow the API's rule (issue 10, item 4): open on loopback
 * while no token exists, a `read` token once one does, unless the operator opens them
 * (ROTSCOPE_PUBLIC_METRICS, ROTSCOPE_PUBLIC_API_DOCS).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../src/store/workspaces.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const PATHS = ['/metrics', '/api/openapi.json'];

async function status(server: TestServer, path: string, token?: string): Promise<number> {
  const response = await fetch(`${server.url}${path}`, {
    ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
  });
  await response.arrayBuffer();
  return response.status;
}

describe('metrics and the OpenAPI document, closed by default', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ loops: false });
  });
  afterAll(async () => server?.close());

  it('are open while no token exists, then need a read token', async () => {
    for (const path of PATHS) expect(await status(server, path)).toBe(200);
    const read = (await createToken(server.store.db, 'default', 'read')).token;
    const ingest = (await createToken(server.store.db, 'default', 'ingest')).token;
    // The auth hook caches "no token exists" for up to 2 s.
    for (const path of PATHS) {
      while ((await status(server, path)) === 200) await new Promise((r) => setTimeout(r, 100));
      expect(await status(server, path)).toBe(401);
      expect(await status(server, path, 'rs_read_not_a_token')).toBe(401);
      expect(await status(server, path, ingest)).toBe(403);
      expect(await status(server, path, read)).toBe(200);
    }
  });
});

describe('metrics and the OpenAPI document, opened by the operator', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      loops: false,
      config: { publicMetrics: true, publicApiDocs: true },
    });
    await createToken(server.store.db, 'default', 'read');
  });
  afterAll(async () => server?.close());

  it('answer without a token while tokens exist', async () => {
    for (const path of PATHS) expect(await status(server, path)).toBe(200);
    // The API itself stays closed.
    expect(await status(server, '/api/findings')).toBe(401);
  });
});
