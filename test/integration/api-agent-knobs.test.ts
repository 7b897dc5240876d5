/**
 * GET /api/agent-knobs: what the Claude Code status line and guard read of a workspace's knobs,
 * with the ingest token its hooks already hold; the workspace's own numbers, nobody else's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../src/store/workspaces.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let ingestA: string;
let readA: string;
let adminA: string;
let ingestB: string;

beforeAll(async () => {
  server = await startTestServer({ loops: false });
  ingestA = (await createToken(server.store.db, 'team-a', 'ingest')).token;
  readA = (await createToken(server.store.db, 'team-a', 'read')).token;
  adminA = (await createToken(server.store.db, 'team-a', 'admin')).token;
  ingestB = (await createToken(server.store.db, 'team-b', 'ingest')).token;
});
afterAll(async () => server.close());

const knobs = (token: string) =>
  fetch(`${server.url}/api/agent-knobs`, { headers: { authorization: `Bearer ${token}` } });

describe('GET /api/agent-knobs', () => {
  it("answers an ingest token with its workspace's bands and toolShare", async () => {
    const put = await fetch(`${server.url}/api/alerts/context-rot`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${adminA}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        thresholds: { usageThreshold: 0.5, usageCritical: 0.75, toolShare: 0.25 },
      }),
    });
    expect(put.status).toBe(200);
    const a = await knobs(ingestA);
    expect(a.status).toBe(200);
    expect(await a.json()).toEqual({
      usageThreshold: 0.5,
      usageCritical: 0.75,
      toolShare: 0.25,
      bands: { dimBelow: 0.5, amberFrom: 0.5, redFrom: 0.75 },
    });
    // another workspace keeps the defaults
    expect(await (await knobs(ingestB)).json()).toMatchObject({
      bands: { dimBelow: 0.6, amberFrom: 0.7, redFrom: 0.85 },
      toolShare: 0.3,
    });
  });

  it('refuses a read token (its scope is for people, not agents) and no token, saying why', async () => {
    const read = await knobs(readA);
    expect(read.status).toBe(403);
    expect(await read.json()).toMatchObject({ message: expect.stringContaining('needs "ingest"') });
    const none = await fetch(`${server.url}/api/agent-knobs`);
    expect(none.status).toBe(401);
  });
});
