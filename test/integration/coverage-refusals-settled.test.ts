/**
 * A refusal whose cause was fixed does not stay an alarm for the seven days it is kept: once the
 * workspace accepts new data after a refusal was last seen, `GET /api/coverage` marks it
 * `settled` (with `acceptedAt`), and a refusal seen again after that is not settled. Real HTTP to
 * a real server: an exporter without a token, then with an ingest token, then without again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../src/store/workspaces.ts';
import { jsonRequest, jsonSpan } from '../helpers/otlp-bodies.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

interface Refusals {
  acceptedAt: string | null;
  items: Array<{ route: string; reason: string; lastSeen: string; settled: boolean }>;
}

let server: TestServer;
let admin: string;
let ingest: string;

const traces = (token?: string) =>
  fetch(`${server.url}/v1/traces`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(
      jsonRequest([
        jsonSpan({
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': 'gpt-4o',
            'gen_ai.conversation.id': `conv-${Math.random()}`,
            'gen_ai.usage.input_tokens': 1200,
            'gen_ai.usage.output_tokens': 80,
          },
        }),
      ]),
    ),
  });

async function refusals(): Promise<Refusals> {
  const response = await fetch(`${server.url}/api/coverage`, {
    headers: { authorization: `Bearer ${admin}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { refusals: Refusals }).refusals;
}

/** The refusal of POST /v1/traces without a token, once the server has written it. */
async function missingToken(until: (row: Refusals['items'][number]) => boolean) {
  for (let i = 0; i < 100; i++) {
    const list = await refusals();
    const row = list.items.find(
      (r) => r.route === 'POST /v1/traces' && r.reason === 'missing_token',
    );
    if (row && until(row)) return { list, row };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the refusal never showed as expected');
}

beforeAll(async () => {
  server = await startTestServer({ loops: false });
  admin = (await createToken(server.store.db, 'default', 'admin')).token;
  ingest = (await createToken(server.store.db, 'default', 'ingest')).token;
  // the server notices within seconds that it is no longer open (probed where no data is taken)
  for (let i = 0; i < 200; i++) {
    if ((await fetch(`${server.url}/api/findings`)).status === 401) {
      expect((await traces()).status).toBe(401);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the server stayed open');
}, 60_000);
afterAll(async () => server?.close());

describe('refusals on GET /api/coverage', () => {
  it('are an alarm until data is accepted after them, and again when a new one comes', async () => {
    const before = await missingToken(() => true);
    expect(before.list.acceptedAt).toBeNull();
    expect(before.row.settled).toBe(false);

    // The exporter now sends an ingest token: its data is stored, after the last refusal.
    expect((await traces(ingest)).status).toBe(200);
    const fixed = await refusals();
    expect(fixed.acceptedAt).not.toBeNull();
    const row = fixed.items.find((r) => r.reason === 'missing_token')!;
    expect(new Date(fixed.acceptedAt!).getTime()).toBeGreaterThan(new Date(row.lastSeen).getTime());
    expect(fixed.items.every((r) => r.settled)).toBe(true);

    // Another exporter (or the same, broken again) is refused after that: an alarm again.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await traces()).status).toBe(401);
    const again = await missingToken((r) => !r.settled);
    expect(new Date(again.row.lastSeen).getTime()).toBeGreaterThan(
      new Date(again.list.acceptedAt!).getTime(),
    );
  });
});
